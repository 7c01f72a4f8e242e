package sqlite

import (
	"crypto/rand"
	"fmt"
	"math"
	"time"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger"
)

// DefaultBatchLimit is the number of writes one transaction takes at most
// when Options.BatchLimit is zero.
const DefaultBatchLimit = 256

// Options tunes a Store beyond the ledger's Config. The zero value is the
// default for every field.
type Options struct {
	// BatchLimit bounds the writes (Submit, Start, Finish, Fail, Timeout)
	// that the writer takes from its queue into one transaction, and so
	// behind one commit and one fsync. Zero means DefaultBatchLimit; 1
	// commits every write on its own, the baseline that group commit is
	// measured against. Negative is an error.
	BatchLimit int

	_ struct{} // forbid positional literals
}

// withDefaults validates o and returns it with every zero field filled in.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.BatchLimit < 0:
		return o, fmt.Errorf("%w: BatchLimit %d is negative", ledger.ErrInvalidConfig, o.BatchLimit)
	case o.BatchLimit == 0:
		o.BatchLimit = DefaultBatchLimit
	}
	return o, nil
}

// configWithDefaults validates c as jobtable.New does and returns it with
// every zero field filled in with jobtable's defaults, so that both stores
// read one Config alike. The default id source is crypto/rand.Text: 26
// base32 characters, as jobtable's ids.
func configWithDefaults(c ledger.Config) (ledger.Config, error) {
	if c.MaxQueue > math.MaxInt32 {
		return c, fmt.Errorf("%w: MaxQueue %d exceeds %d", ledger.ErrInvalidConfig, c.MaxQueue, math.MaxInt32)
	}
	if c.JobTTL == 0 {
		c.JobTTL = jobtable.DefaultJobTTL
	}
	if c.MaxCompleted == 0 {
		c.MaxCompleted = jobtable.DefaultMaxCompleted
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = rand.Text
	}
	return c, nil
}
