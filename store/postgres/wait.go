package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// waiter is one blocked Wait. kick has room for one signal, sent under
// Store.waitMu without blocking: nil means "re-read the row"; a snapshot
// is the job's final one, from the notification of its end. A pending
// final snapshot is never replaced by a nil kick, and a pending nil kick
// is replaced by a final snapshot, so the waiter loses neither.
type waiter struct {
	kick chan *ledger.Snapshot
}

// Wait blocks until the job is terminal or ctx ends: nil with the final
// snapshot, or ctx.Err() with the latest one read. It returns ErrNotFound
// at once for a job the store does not hold (or that is evicted while it
// waits, before it saw the end), and ErrClosed, with the latest snapshot,
// at once if the store is closed while it waits.
//
// It registers locally before it reads the row, and the listener,
// LISTENing since before Open returned, kicks it on every notification
// carrying its job's id, which the end's transaction sends and
// PostgreSQL delivers only after the commit. Either its read came after
// the commit, and it sees the end, or the notification for that commit
// kicks it after it registered. It polls only while the listener is
// down (health.go), when notifications are lost: it reads the row every
// Lease/3, and a read that fails is tried again at the next; the kick of
// every waiter once the listener LISTENs again covers the ends since the
// last poll (listen.go). When ctx ends it reads the row once more, so
// that a job that ended is reported as ended.
func (s *Store) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	w := &waiter{kick: make(chan *ledger.Snapshot, 1)}
	s.register(id, w)
	defer s.unregister(id, w)
	read := context.WithoutCancel(ctx)
	snap, err := s.readSnapshot(read, id)
	for {
		if err != nil || snap.State.Terminal() {
			return snap, err
		}
		h := s.health.Load()
		var poll <-chan time.Time // nil, never ready, while the listener is up
		if !h.up {
			poll = time.After(s.opts.Lease / 3)
		}
		select {
		case final := <-w.kick:
			if final != nil {
				return *final, nil
			}
		case <-h.down: // the listener went down: poll from now on
			continue
		case <-poll:
			if s.health.Load().up {
				continue // the reconnect's kick, pending, re-reads
			}
			latest, err := s.readSnapshot(read, id)
			switch {
			case err == nil:
				snap = latest
			case errors.Is(err, ledger.ErrNotFound), errors.Is(err, ledger.ErrClosed):
				return snap, err
			}
			continue
		case <-ctx.Done():
			select {
			case final := <-w.kick:
				if final != nil {
					return *final, nil // ended in the same instant
				}
			default:
			}
			latest, err := s.readSnapshot(read, id)
			if err == nil && latest.State.Terminal() {
				return latest, nil
			}
			if err == nil {
				snap = latest
			}
			return snap, ctx.Err()
		case <-s.quit:
			return snap, ledger.ErrClosed
		}
		latest, err2 := s.readSnapshot(read, id)
		if err2 == nil {
			snap = latest
		}
		err = err2
	}
}

// register adds w to the waiters of job id.
func (s *Store) register(id string, w *waiter) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	ws := s.waiters[id]
	if ws == nil {
		ws = map[*waiter]struct{}{}
		s.waiters[id] = ws
	}
	ws[w] = struct{}{}
}

// unregister removes w from the waiters of job id.
func (s *Store) unregister(id string, w *waiter) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	ws := s.waiters[id]
	delete(ws, w)
	if len(ws) == 0 {
		delete(s.waiters, id)
	}
}

// kick wakes every waiter of job id with final, its final snapshot, or,
// if nil, to re-read it.
func (s *Store) kick(id string, final *ledger.Snapshot) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for w := range s.waiters[id] {
		signalLocked(w, final)
	}
}

// kickAll signals every waiter of every job to re-read it.
func (s *Store) kickAll() {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for _, ws := range s.waiters {
		for w := range ws {
			signalLocked(w, nil)
		}
	}
}

// signalLocked leaves final (or a nil kick) in w's channel, as the
// waiter's doc says. s.waitMu must be held: only holders send, so after a
// drain the send cannot block.
func signalLocked(w *waiter, final *ledger.Snapshot) {
	select {
	case w.kick <- final:
		return
	default:
	}
	if final == nil {
		return // a kick is pending; a final one stays
	}
	select {
	case <-w.kick:
	default:
	}
	w.kick <- final
}

// waiting is the number of Waits registered, for tests.
func (s *Store) waiting() int {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	n := 0
	for _, ws := range s.waiters {
		n += len(ws)
	}
	return n
}
