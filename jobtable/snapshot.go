//go:build !mutant_d1

package jobtable

// snapshot returns a consistent view of j, taking j.mu: state, error and
// timestamps are read together, never half of a transition (D1).
func (j *job[Req, Res]) snapshot() Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snapshotLocked()
}
