package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// DropListener terminates the listener connections on s's database, so
// that a test sees the store reconnect.
func (s *Store) DropListener(ctx context.Context) error { return s.dropListener(ctx) }

// Waiting is the number of Waits registered on s.
func (s *Store) Waiting() int { return s.waiting() }

// OpenWithReconnectHook is Open with a hook the listener goroutine calls
// before each reconnect.
func OpenWithReconnectHook(ctx context.Context, dsn string, cfg ledger.Config, opts Options, hook func()) (*Store, error) {
	return open(ctx, dsn, cfg, opts, hook)
}

// Renew renews the leases of the jobs s holds now, as its keeper does.
func (s *Store) Renew(ctx context.Context) error { return s.renew(ctx) }

// Reap runs s's reaper once, as its keeper does, and returns how many jobs
// it ended.
func (s *Store) Reap(ctx context.Context) (int, error) { return s.reap(ctx) }

// ListQueries are the page queries of list.go, by the filter each serves,
// for a test of their query plans.
var ListQueries = map[string]string{"all": qListAll, "task": qListTask, "state": qListState}

// BatchQueries are the statements of the writer's batches and the
// keeper's renewal, by name, for a test of their query plans.
var BatchQueries = map[string]string{
	"lock ledger": qLockLedger, "lock ends": qLockEnds, "end": qEnd, "notify ends": qNotifyEnds,
	"submit": qSubmit, "evict ttl": qEvictTTL, "evict lru": qEvictLRU, "claim": qClaim, "renew": qRenew,
}

// Queued is the number of writes waiting for s's writer.
func (s *Store) Queued() int {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	return len(s.q.ops)
}

// LockLedgerRow begins a transaction on a connection of s's pool, locks the
// ledger row in it as every admission and end does, and leaves the
// transaction open and idle: the connection is never given back.
func (s *Store) LockLedgerRow(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT 1 FROM ledger WHERE id = 1 FOR UPDATE`)
	return err
}

// Transient is transient, for its test.
var Transient = transient

// WithConn calls f with a connection of s's pool.
func (s *Store) WithConn(ctx context.Context, f func(*pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c.Conn())
}
