//go:build mutant_d4

package jobtable

import "runtime"

// Mutant D4, the seed's lost-wakeup window: the waiter checks the state in
// one critical section and takes the wakeup channel in another. A terminal
// transition between the two publishes the state and finds no channel to
// close; the waiter then blocks on a channel nobody will close. The yield
// stands for a preemption between the two critical sections; it widens the
// window so that a short run shows what a long one would.
//
// Spec: the D4 variant, WaitCheck then WaitRegister.
func (j *job[Req, Res]) register() (Snapshot, <-chan struct{}) {
	snap := j.snapshot()
	if snap.State.Terminal() {
		return snap, nil
	}
	runtime.Gosched()
	j.mu.Lock()
	defer j.mu.Unlock()
	return snap, j.waitChanLocked()
}
