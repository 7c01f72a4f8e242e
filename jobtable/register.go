//go:build !mutant_d4

package jobtable

// register checks j's state and, unless it is terminal, takes j's wakeup
// channel, both in one critical section under j.mu. The terminal transition
// publishes the state and closes the channel in one critical section under
// the same lock, so either register sees the terminal state or the channel
// it returns will be closed: the wakeup cannot be lost (D4). It returns a
// nil channel for a terminal job.
//
// Spec action: WaitCheck.
func (j *job[Req, Res]) register() (Snapshot, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	snap := j.snapshotLocked()
	if snap.State.Terminal() {
		return snap, nil
	}
	return snap, j.waitChanLocked()
}
