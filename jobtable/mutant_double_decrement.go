//go:build mutant_double_decrement

package jobtable

import "time"

// Mutant: a second terminal call is refused but still decrements depth, so
// the terminal decrement is no longer exactly-once.
func (t *Table[Req, Res]) terminateJob(j *job[Req, Res], to State, res Res, err error, now time.Time) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.terminateLocked(to, res, err, now, &t.depth) {
		t.depth.Add(-1)
		return false
	}
	j.wakeLocked()
	return true
}
