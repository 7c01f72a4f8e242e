package jobtable

import "github.com/jobledger/jobledger/ledger/ledgertype"

// Snapshot returns a consistent view of the job, or ErrNotFound. A
// terminal job's final snapshot is read without its lock (see job.final).
//
// Spec action: Snapshot.
func (t *Table[Req, Res]) Snapshot(id string) (Snapshot, error) {
	j := t.lookup(id)
	if j == nil {
		return Snapshot{}, ErrNotFound
	}
	return j.snapshot(), nil
}

// State returns the job's state alone, or ErrNotFound: the cheapest poll.
// It reads the atomic state without taking the job's lock, so it never
// waits for a transition in progress; it shows the state before or after
// that transition, never a mix, because the state is one atomic value.
// Use Snapshot for the state together with its error and timestamps.
func (t *Table[Req, Res]) State(id string) (State, error) {
	j := t.lookup(id)
	if j == nil {
		return 0, ErrNotFound
	}
	return j.loadState(), nil
}

// Result returns the result of a DONE job with a snapshot of it. It can be
// called any number of times until retention evicts the job. For a job in
// another state it returns ErrNotDone with the snapshot, whose State says
// where the job stands; for an unknown id, ErrNotFound.
//
// A terminal job's result and final snapshot are read without its lock
// (see job.final); a live job's snapshot under it.
//
// Spec action: Result.
func (t *Table[Req, Res]) Result(id string) (Res, Snapshot, error) {
	var zero Res
	j := t.lookup(id)
	if j == nil {
		return zero, Snapshot{}, ErrNotFound
	}
	snap, ok := j.final()
	if !ok {
		// Live, or ending right now: then the locked snapshot is DONE and
		// the result is read under the same lock.
		j.mu.Lock()
		defer j.mu.Unlock()
		snap = j.snapshotLocked()
	}
	traceResult(j, snap)
	if snap.State != ledgertype.Done {
		return zero, snap, ErrNotDone
	}
	return j.res, snap, nil
}

// TakeRequest moves the job's request out of the table. It succeeds once,
// and only while the job is not terminal. For a terminal job it returns
// ErrTerminal: the terminal transition drops a request nobody took, so a job
// cancelled or timed out while PENDING does not hold its payload until
// retention evicts it. For a live job whose request was already taken it
// returns ErrRequestTaken. The task id stays in the job's snapshot, so a
// result can still echo it. The table keeps no reference to the request
// afterwards, so a large payload can be collected while the job runs.
//
// Spec action: TakeRequest.
func (t *Table[Req, Res]) TakeRequest(id string) (Req, error) {
	var zero Req
	j := t.lookup(id)
	if j == nil {
		return zero, ErrNotFound
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.loadState().Terminal():
		traceTake(j, ErrTerminal)
		return zero, ErrTerminal
	case j.reqReleased:
		traceTake(j, ErrRequestTaken)
		return zero, ErrRequestTaken
	}
	req := j.req
	j.req, j.reqReleased = zero, true
	traceTake(j, nil)
	return req, nil
}
