package ledgertype

import (
	"crypto/rand"
	"fmt"
	"math"
	"time"
)

// Defaults that WithDefaults fills in for zero Config fields.
const (
	DefaultJobTTL       = 10 * time.Minute
	DefaultMaxCompleted = 1024
)

// Config configures a ledger; every store honours every field alike. The
// zero value is valid and admits nothing (MaxQueue 0).
type Config struct {
	// MaxQueue bounds the number of admitted jobs that are not yet terminal
	// (PENDING or RUNNING). Zero or negative admits nothing: every Submit
	// returns ErrQueueFull. At most math.MaxInt32.
	MaxQueue int

	// JobTTL is how long a terminal job is retained after it completed.
	// Zero means DefaultJobTTL; negative means terminal jobs never expire by
	// time (MaxCompleted still bounds them).
	JobTTL time.Duration

	// MaxCompleted bounds the number of retained terminal jobs; beyond it
	// the least recently completed are evicted. Zero means
	// DefaultMaxCompleted; negative means no bound (JobTTL still applies).
	MaxCompleted int

	// Now is the clock for timestamps and TTL. Nil means the store's own
	// clock (time.Now in process, the database's clock for a store that
	// has one). Tests inject a fake clock; no store sleeps on it. It must
	// never go backwards (time.Now's monotonic reading does not): a store
	// orders a job's timestamps by ordering its reads, so CreatedAt <=
	// StartedAt <= CompletedAt holds only as far as the clock is monotonic.
	Now func() time.Time

	// NewID returns a fresh job id. Nil means 128 random bits from
	// crypto/rand, as 26 base32 characters (A-Z, 2-7): unique and
	// unguessable. An injected source must never repeat an id.
	NewID func() string

	_ struct{} // forbid positional literals
}

// WithDefaults validates c and returns it with the zero JobTTL,
// MaxCompleted and NewID filled in; Now is left as it is. It fails,
// wrapping ErrInvalidConfig, if c holds a value out of range.
func (c Config) WithDefaults() (Config, error) {
	if c.MaxQueue > math.MaxInt32 {
		return c, fmt.Errorf("%w: MaxQueue %d exceeds %d", ErrInvalidConfig, c.MaxQueue, math.MaxInt32)
	}
	if c.JobTTL == 0 {
		c.JobTTL = DefaultJobTTL
	}
	if c.MaxCompleted == 0 {
		c.MaxCompleted = DefaultMaxCompleted
	}
	if c.NewID == nil {
		c.NewID = rand.Text
	}
	return c, nil
}
