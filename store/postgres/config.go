package postgres

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// Options tunes a Store beyond the ledger's Config. The zero value is the
// default for every field.
type Options struct {
	// MaxConns bounds the pool's connections (the listener's is extra).
	// Zero means pgxpool's default; negative is an error.
	MaxConns int32
	// Replica names this Store among the replicas that share the
	// database: the owner of the jobs it takes, starts and claims. Each
	// live replica needs a name of its own, kept across its restarts: Open
	// fails the jobs its name still runs (its earlier life is dead), and
	// never touches the other names' jobs, which their leases guard.
	// Printable ASCII without spaces, at most MaxReplicaLen
	// bytes. Empty means DefaultReplica, the one name of a single
	// replica.
	Replica string
	// Lease is how long a job's lease lasts: this Store renews the leases
	// of its live jobs every Lease/3, and another replica's reaper ends a
	// job whose lease lapsed. Between MinLease and MaxLease; zero means
	// DefaultLease.
	Lease time.Duration
	// Logger receives each change of the listener's state, once: the
	// loss of its connection, and its reconnect. Nil means
	// slog.Default().
	Logger *slog.Logger

	_ struct{} // forbid positional literals
}

// The defaults and bounds of Options.
const (
	DefaultReplica = "solo"
	MaxReplicaLen  = 255
	DefaultLease   = 15 * time.Second
	MinLease       = 100 * time.Millisecond
	MaxLease       = 24 * time.Hour
)

// withDefaults validates o and fills in the defaults of its zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.MaxConns < 0 {
		return o, fmt.Errorf("%w: MaxConns %d is negative", ledger.ErrInvalidConfig, o.MaxConns)
	}
	if o.Replica == "" {
		o.Replica = DefaultReplica
	}
	if err := validReplica(o.Replica); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Lease < MinLease || o.Lease > MaxLease {
		return o, fmt.Errorf("%w: Lease %v is not between %v and %v", ledger.ErrInvalidConfig, o.Lease, MinLease, MaxLease)
	}
	return o, nil
}

// validReplica checks a replica's name: printable ASCII without spaces,
// at most MaxReplicaLen bytes.
func validReplica(name string) error {
	if len(name) > MaxReplicaLen {
		return fmt.Errorf("%w: Replica is %d bytes long, more than %d", ledger.ErrInvalidConfig, len(name), MaxReplicaLen)
	}
	for i := range len(name) {
		if c := name[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: Replica %q has a byte that is not printable ASCII (or is a space) at %d", ledger.ErrInvalidConfig, name, i)
		}
	}
	return nil
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
