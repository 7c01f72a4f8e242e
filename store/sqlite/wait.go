package sqlite

import (
	"context"

	"github.com/jobledger/jobledger/ledger"
)

// waiter is the wakeup of one job's waiters, in Store.waiters while the job
// has a waiter and is not known to have ended.
//
// Synchronisation: done is closed once, by the writer under Store.waitMu,
// after it wrote final; a waiter reads final only after receiving from
// done, which orders the read after the write. n and blocked are guarded
// by Store.waitMu.
//
// Invariant: 0 <= blocked <= n; a waiter with blocked > 0 is on a job
// that the latest commit left live (NoLostWakeupInv).
type waiter struct {
	done    chan struct{}
	final   ledger.Snapshot // the job's snapshot as the ending commit left it
	n       int             // waiters registered on it
	blocked int             // of those, the ones that read the job live and wait
}

// Wait blocks until the job is terminal or ctx ends, as jobtable's Wait:
// nil with the final snapshot, or ctx.Err() with the latest one. It
// returns ErrNotFound at once for a job the store does not hold, and
// ErrClosed, with the latest snapshot, if the store is closed while it
// waits: no completion can come after Close.
//
// It never polls and cannot miss a completion: it registers before it
// reads, and the writer wakes after it commits. Its reads run without ctx's cancellation, so
// that a job found terminal is reported so even with an ended ctx.
func (s *Store) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	w := s.register(id)
	snap, err := s.readSnapshot(context.WithoutCancel(ctx), id)
	if err != nil || snap.State.Terminal() {
		s.unregister(id, w, false)
		return snap, err
	}
	s.block(id, w)
	select {
	case <-w.done:
		return w.final, nil
	case <-ctx.Done():
	case <-s.quit:
	}
	s.unregister(id, w, true)
	select {
	case <-w.done:
		// Ended in the same instant: select chose at random, and a job
		// that completed counts as completed.
		return w.final, nil
	default:
	}
	// The job is still live at the latest commit the writer woke for; the
	// snapshot read now is that or later.
	latest, err := s.readSnapshot(context.WithoutCancel(ctx), id)
	switch {
	case err == nil && latest.State.Terminal():
		return latest, nil
	case err == nil:
		snap = latest
	}
	if ctx.Err() != nil {
		return snap, ctx.Err()
	}
	return snap, ledger.ErrClosed
}

// register adds a waiter on job id and returns its wakeup.
func (s *Store) register(id string) *waiter {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	w := s.waiters[id]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		s.waiters[id] = w
	}
	w.n++
	return w
}

// block records that a waiter registered on w found job id live and is
// about to block.
func (s *Store) block(id string, w *waiter) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waiters[id] == w {
		w.blocked++
	}
}

// unregister removes a waiter on job id that no longer waits on w, blocked
// if it had called block. The writer may have woken w and dropped it
// already.
func (s *Store) unregister(id string, w *waiter, blocked bool) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.waiters[id] != w {
		return // woken
	}
	if blocked {
		w.blocked--
	}
	if w.n--; w.n == 0 {
		delete(s.waiters, id)
	}
}

// wakeLocked wakes the waiters of the job that ended as final.
// s.waitMu must be held, and the commit that ended the job must have
// returned.
func (s *Store) wakeLocked(final ledger.Snapshot) {
	w := s.waiters[final.ID]
	if w == nil {
		return
	}
	w.final = final
	close(w.done)
	delete(s.waiters, final.ID)
}
