//go:build !mutant_double_decrement

package jobtable

import "time"

// terminateJob is the terminal transition's critical section: under j.mu it
// writes the payload, decrements depth, publishes the state and wakes the
// waiters. A waiter checks the state and takes the wakeup channel under the
// same lock, so it either sees the terminal state or is woken: a wakeup
// cannot be lost (D4). It reports false, changing nothing, for a job that is
// already terminal, so depth falls exactly once per job.
//
// Spec actions: Finish, Fail or Timeout (the state published), then
// TerminateRelease (the decrement, the wakeup, retention, the unlocks).
func (t *Table[Req, Res]) terminateJob(j *job[Req, Res], to State, res Res, err error, now time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.terminateLocked(to, res, err, now, &t.depth) {
		return false
	}
	j.wakeLocked()
	return true
}
