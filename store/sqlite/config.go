package sqlite

import (
	"fmt"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// DefaultBatchLimit is the number of writes one transaction takes at most
// when Options.BatchLimit is zero.
const DefaultBatchLimit = 256

// MaxValueBytes is the default and the ceiling of Options.MaxValueBytes:
// 256 MiB. SQLite refuses a value or a row over 10^9 bytes (SQLITE_TOOBIG),
// which would fail the transaction of the whole batch, every other write
// of it with it; and the driver binds a value's length as a 32-bit
// integer, so from 2 GiB a truncated value would be stored without an
// error. A job's row holds what its Submit carried and what its end
// carried, twice this at most, well within SQLite's limit.
const MaxValueBytes = 256 << 20

// Options tunes a Store beyond the ledger's Config. The zero value is the
// default for every field.
type Options struct {
	// BatchLimit bounds the writes (Submit, Start, Finish, Fail, Timeout)
	// that the writer takes from its queue into one transaction, and so
	// behind one commit and one fsync. Zero means DefaultBatchLimit; 1
	// commits every write on its own, the baseline that group commit is
	// measured against. Negative is an error.
	BatchLimit int
	// MaxValueBytes bounds the bytes one write carries: a Submit's id,
	// task id, request, idempotency key and digest together; a Finish's
	// id and result; a Fail's or a Timeout's id and error message. A write
	// over it is refused with ErrTooLarge before it is queued, and changes
	// nothing; a Start, Finish, Fail or Timeout whose id alone is longer
	// gets ErrNotFound, as no job has such an id. Zero means
	// MaxValueBytes, the most it may be; negative or more is an error.
	MaxValueBytes int

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
	switch {
	case o.MaxValueBytes < 0 || o.MaxValueBytes > MaxValueBytes:
		return o, fmt.Errorf("%w: MaxValueBytes %d is not in [0, %d]", ledger.ErrInvalidConfig, o.MaxValueBytes, MaxValueBytes)
	case o.MaxValueBytes == 0:
		o.MaxValueBytes = MaxValueBytes
	}
	return o, nil
}

// configWithDefaults validates c and fills in the contract's defaults
// for zero fields (Config.WithDefaults), and time.Now for a nil Now.
func configWithDefaults(c ledger.Config) (ledger.Config, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	return c.WithDefaults()
}
