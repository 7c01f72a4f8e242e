//go:build mutant_double_decrement

package jobtable

// Mutant: a second terminal call is refused but still decrements depth, so
// the terminal decrement is no longer exactly-once.
func (t *Table[Req, Res]) terminateJob(j *job[Req, Res], to State, res Res, err error) (Snapshot, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.terminateLocked(to, res, err, t.cfg.Now(), &t.depth) {
		t.depth.Add(-1)
		return j.snapshotLocked(), false
	}
	j.wakeLocked()
	return j.snapshotLocked(), true
}
