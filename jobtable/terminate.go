//go:build !mutant_double_decrement

package jobtable

// terminateJob is the terminal transition's critical section: under j.mu it
// reads the clock, writes the payload, drops the request, decrements depth,
// publishes the state and wakes the waiters. A waiter checks the state and
// takes the wakeup channel under the same lock, so it either sees the
// terminal state or is woken: a wakeup cannot be lost (D4). It reports
// false, changing nothing, for a job that is already terminal, so depth
// falls exactly once per job. Either way it returns the job's snapshot as
// it left the critical section.
// t.mu must be held (see terminate: it keeps the retention list in
// completedAt order).
//
// Spec actions: Finish, Fail or Timeout (the clock read and the state
// published), then TerminateRelease (the decrement, the wakeup, retention,
// the unlocks).
func (t *Table[Req, Res]) terminateJob(j *job[Req, Res], to State, res Res, err error) (Snapshot, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.terminateLocked(to, res, err, t.cfg.Now(), &t.depth) {
		return j.snapshotLocked(), false
	}
	j.wakeLocked()
	return j.snapshotLocked(), true
}
