package postgres

import (
	"context"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

var _ ledger.Shared[[]byte] = (*Store)(nil)

// Work receives, coalesced, when a job may have become claimable: an
// admission on any replica (its transaction notifies workChannel), a
// restart that released taken requests, or a reconnect of the listener,
// after which notifications may have been missed. It holds one signal
// from Open on, so a claimer that waits on it first claims once.
func (s *Store) Work() <-chan struct{} { return s.work }

// signalWork leaves a signal in s.work unless one is pending.
func (s *Store) signalWork() {
	select {
	case s.work <- struct{}{}:
	default:
	}
}

// OnEnd registers fn, called by the listener goroutine with the final
// snapshot of every end, on any replica, this one included, after the
// commit, once, in the order of the ends' commits; never concurrently
// with itself. Register before serving; fn must not block. An end whose
// notification carries no snapshot (too big for one) is read from its
// row; the ends committed while the listener was disconnected, whose
// notifications are lost, are read from their rows once it listens again
// (listen.go). Either read leaves out a job that retention deleted
// first.
func (s *Store) OnEnd(fn func(ledger.Snapshot)) {
	s.onEndMu.Lock()
	defer s.onEndMu.Unlock()
	s.onEnd = append(s.onEnd, fn)
}

// ended calls the OnEnd functions with final.
func (s *Store) ended(final ledger.Snapshot) {
	s.onEndMu.Lock()
	fns := s.onEnd
	s.onEndMu.Unlock()
	for _, fn := range fns {
		fn(final)
	}
}

// Now reads the store's clock: Config.Now when set, else the database's,
// the one the snapshots' times come from.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if n := s.now(); n != nil {
		return fromNanos(n), nil
	}
	if s.closed.Load() {
		return time.Time{}, ledger.ErrClosed
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT `+dbNow).Scan(&n); err != nil {
		return time.Time{}, s.callErr(ctx, "reading the database's clock", err)
	}
	return fromNanos(&n), nil
}
