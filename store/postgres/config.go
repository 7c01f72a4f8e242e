package postgres

import (
	"crypto/rand"
	"fmt"
	"math"
	"time"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger"
)

// Options tunes a Store beyond the ledger's Config. The zero value is the
// default for every field.
type Options struct {
	// MaxConns bounds the pool's connections (the listener's is extra).
	// Zero means pgxpool's default; negative is an error.
	MaxConns int32

	_ struct{} // forbid positional literals
}

func (o Options) validate() error {
	if o.MaxConns < 0 {
		return fmt.Errorf("%w: MaxConns %d is negative", ledger.ErrInvalidConfig, o.MaxConns)
	}
	return nil
}

// configWithDefaults validates c and fills in jobtable's defaults for zero
// fields, as the other stores do, with one difference: a nil Now is left
// nil, and means the database's clock (see the package doc, "Time").
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
	if c.NewID == nil {
		c.NewID = rand.Text
	}
	return c, nil
}

// now is the time argument of a write: Config.Now's reading in Unix
// nanoseconds, or nil for the database's clock (every statement that
// takes it reads `coalesce($n, dbNow)`).
func (s *Store) now() *int64 {
	if s.cfg.Now == nil {
		return nil
	}
	n := s.cfg.Now().UnixNano()
	return &n
}

// dbNow is the database's clock in Unix nanoseconds (to the microsecond).
const dbNow = `(extract(epoch FROM clock_timestamp()) * 1000000000)::bigint`

// fromNanos turns a stored time into a time.Time in UTC; NULL is zero.
func fromNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}
