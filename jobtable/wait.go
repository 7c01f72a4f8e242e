package jobtable

import "context"

// Wait blocks until the job is terminal or ctx ends, and returns the job's
// latest snapshot. It returns a nil error when the job is terminal and
// ctx.Err() when ctx ended first; for an unknown id it returns ErrNotFound
// at once.
//
// Wait never polls, cannot miss a completion at any moment before or during
// the wait, and reads the final snapshot without the lock once woken: the
// package doc, contract item 2, says why. Wait
// holds the job itself, not its id, so if retention evicts the job during
// the wait it still returns the job's final snapshot: the outcome is never
// lost to eviction.
//
// Spec actions: WaitCheck and WaitRegister (the check and the taking of the
// wakeup channel, under one holding of the job lock), WaitBlock (the
// blocking receive), WaitReturn (the final snapshot, read without a lock),
// or WaitCancel (the context ended first).
func (t *Table[Req, Res]) Wait(ctx context.Context, id string) (Snapshot, error) {
	j := t.lookup(id)
	if j == nil {
		return Snapshot{}, ErrNotFound
	}
	if snap, ok := j.final(); ok {
		traceWaitCheck(j, snap.State)
		return snap, nil // already terminal: no lock needed
	}
	snap, done := j.register()
	if done == nil {
		return snap, nil // terminal by the time the lock was ours
	}

	ctxDone := ctx.Done()
	if ctxDone == nil {
		// A context that never ends: a plain receive, which the runtime
		// wakes faster than a select.
		<-done
		traceWaitWoken(j)
		return j.snapshotAs(j.loadState()), nil // see below
	}
	select {
	case <-done:
		// Received from the closed channel: ordered after the terminal
		// critical section, which wrote the final snapshot and stored the
		// terminal state before it closed the channel. No lock: the
		// finisher may still hold it.
		traceWaitWoken(j)
		return j.snapshotAs(j.loadState()), nil
	case <-ctxDone:
		traceWaitCancel(j)
		// The snapshot is taken after the context ended, so it shows the
		// job as it was at the deadline or later, never before. select
		// chooses at random when both cases are ready: a job that
		// completed in the same instant still counts as completed.
		snap := j.snapshot()
		if snap.State.Terminal() {
			return snap, nil
		}
		return snap, ctx.Err()
	}
}

// register checks j's state and, unless it is terminal, takes j's wakeup
// channel, both in one critical section under j.mu, so that either it sees
// the terminal state or the channel it returns will be closed: no wakeup is
// lost (contract item 2 of the package doc). It returns a nil channel for a
// terminal job.
//
// Spec actions: WaitCheck, then WaitRegister with the job lock still held.
func (j *job[Req, Res]) register() (Snapshot, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	snap := j.snapshotLocked()
	traceWaitCheck(j, snap.State)
	if snap.State.Terminal() {
		return snap, nil
	}
	traceWaitRegister(j)
	return snap, j.waitChanLocked()
}
