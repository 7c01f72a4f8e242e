package jobtable

import "github.com/jobledger/jobledger/ledger/ledgertype"

// Start moves a PENDING job to RUNNING and returns its snapshot as the
// transition left it. It returns ErrNotFound with a zero Snapshot for an
// unknown id, and ErrNotPending with the job's current snapshot for a job in
// any other state.
//
// Start reads the clock while holding the job's lock, as the terminal
// transition does, so a job's StartedAt never follows its CompletedAt
// (TimestampOrderInv).
//
// Spec action: Start.
func (t *Table[Req, Res]) Start(id string) (Snapshot, error) {
	j := t.lookup(id)
	if j == nil {
		return Snapshot{}, ErrNotFound
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !canTransition(j.loadState(), ledgertype.Running) {
		traceStart(j, ErrNotPending)
		return j.snapshotLocked(), ErrNotPending
	}
	j.startedAt = t.cfg.Now() // under j.mu: ordered against the terminal transition's read
	j.setStateLocked(ledgertype.Running)
	traceStart(j, nil)
	return j.snapshotLocked(), nil
}

// Finish ends a non-terminal job DONE with res and returns the snapshot the
// transition produced. It returns ErrNotFound with a zero Snapshot for an
// unknown id, and ErrTerminal, changing nothing, with the job's current
// (terminal) snapshot for a terminal job.
//
// Spec actions: Finish, then TerminateRelease.
func (t *Table[Req, Res]) Finish(id string, res Res) (Snapshot, error) {
	return t.terminate(id, ledgertype.Done, res, nil)
}

// Fail ends a non-terminal job FAILED with err (ErrNoCause when nil) and
// returns the snapshot the transition produced. It returns ErrNotFound with
// a zero Snapshot for an unknown id, and ErrTerminal, changing nothing, with
// the job's current (terminal) snapshot for a terminal job.
//
// Spec actions: Fail, then TerminateRelease.
func (t *Table[Req, Res]) Fail(id string, err error) (Snapshot, error) {
	var zero Res
	return t.terminate(id, ledgertype.Failed, zero, cause(err))
}

// Timeout ends a non-terminal job TIMEOUT with err (ErrNoCause when nil)
// and returns the snapshot the transition produced. It returns ErrNotFound
// with a zero Snapshot for an unknown id, and ErrTerminal, changing nothing,
// with the job's current (terminal) snapshot for a terminal job.
//
// Spec actions: Timeout, then TerminateRelease.
func (t *Table[Req, Res]) Timeout(id string, err error) (Snapshot, error) {
	var zero Res
	return t.terminate(id, ledgertype.TimedOut, zero, cause(err))
}

// cause is the error a job ends with for err: err, or ErrNoCause for nil.
func cause(err error) error {
	if err == nil {
		return ErrNoCause
	}
	return err
}

// terminate is the terminal transition, the only place depth decreases. It
// finds the job without the table lock, then holds the table lock to
// retain it, and the job lock around the transition itself (table, then
// job). A job evicted between the lookup and the table lock is terminal,
// so the transition refuses it and it is not retained again. The job's
// critical section is terminateJob. The state machine makes a second
// terminal call a no-op, so depth decreases exactly once per job [4].
//
// It returns the snapshot taken in that critical section, so a caller can
// report the outcome even if a Submit evicts the job as soon as the table
// lock is released (a cancel that succeeded must not answer 404).
//
// The clock is read under both locks: under the job lock so that
// completedAt cannot precede a startedAt written by a Start that held the
// job lock first, and under the table lock so that the retention list,
// appended to under that lock, stays in completedAt order, which TTL
// eviction relies on when it looks only at the front.
func (t *Table[Req, Res]) terminate(id string, to State, res Res, err error) (Snapshot, error) {
	j := t.lookup(id)
	if j == nil {
		return Snapshot{}, ErrNotFound
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	snap, ok := t.terminateJob(j, to, res, err)
	if !ok {
		return snap, ErrTerminal
	}
	t.retainLocked(j)
	return snap, nil
}

// terminateJob is the terminal transition's critical section: under j.mu it
// reads the clock, writes the payload, drops the request, publishes the
// state, decrements depth and wakes the waiters: one critical section, so
// a reader holding the job lock never sees half a transition and no
// wakeup is lost (the package doc, contract item 2, says why). It reports
// false, changing nothing, for a job that is already terminal, so depth
// falls exactly once per job. Either way it returns the job's snapshot as
// it left the critical section.
// t.mu must be held (see terminate: it keeps the retention list in
// completedAt order).
//
// Spec actions: Finish, Fail or Timeout (the clock read and the payload
// written under both locks), then TerminateRelease (the state stored, the
// decrement, the wakeup, retention, the unlocks).
func (t *Table[Req, Res]) terminateJob(j *job[Req, Res], to State, res Res, err error) (Snapshot, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.terminateLocked(to, res, err, t.cfg.Now(), &t.depth) {
		return j.snapshotLocked(), false
	}
	j.wakeLocked()
	return j.snapshotLocked(), true
}
