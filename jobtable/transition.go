package jobtable

// Start moves a PENDING job to RUNNING. It returns ErrNotFound for an unknown
// id and ErrNotPending for a job in any other state.
//
// Spec action: Start.
func (t *Table[Req, Res]) Start(id string) error {
	j := t.lookup(id)
	if j == nil {
		return ErrNotFound
	}
	now := t.cfg.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	if !canTransition(j.loadState(), Running) {
		return ErrNotPending
	}
	j.startedAt = now
	j.state.Store(int32(Running))
	return nil
}

// Finish ends a non-terminal job DONE with res. It returns ErrNotFound for an
// unknown id and ErrTerminal, changing nothing, for a terminal job.
//
// Spec actions: Finish, then TerminateRelease.
func (t *Table[Req, Res]) Finish(id string, res Res) error {
	return t.terminate(id, Done, res, nil)
}

// Fail ends a non-terminal job FAILED with err (which should not be nil). It
// returns ErrNotFound for an unknown id and ErrTerminal, changing nothing, for
// a terminal job.
//
// Spec actions: Fail, then TerminateRelease.
func (t *Table[Req, Res]) Fail(id string, err error) error {
	var zero Res
	return t.terminate(id, Failed, zero, err)
}

// Timeout ends a non-terminal job TIMEOUT with err (which should not be nil).
// It returns ErrNotFound for an unknown id and ErrTerminal, changing nothing,
// for a terminal job.
//
// Spec actions: Timeout, then TerminateRelease.
func (t *Table[Req, Res]) Timeout(id string, err error) error {
	var zero Res
	return t.terminate(id, TimedOut, zero, err)
}

// terminate is the terminal transition, the only place depth decreases. It
// holds the table lock to find the job and to retain it, and the job lock
// around the transition itself (table, then job). Inside the job's critical
// section it writes the payload, publishes the state, decrements depth and
// wakes every waiter: a reader holding the job lock never sees a half-done
// transition (D1) and a waiter can never miss the wakeup (D4). The state
// machine makes a second terminal call a no-op, so depth decreases exactly
// once per job [4].
func (t *Table[Req, Res]) terminate(id string, to State, res Res, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.cfg.Now() // under the lock: the retention list stays in completedAt order
	j := t.jobs[id]
	if j == nil {
		return ErrNotFound
	}
	if !t.terminateJob(j, to, res, err, now) {
		return ErrTerminal
	}
	t.retainLocked(j)
	return nil
}
