package jobtable

import (
	"sync"
	"sync/atomic"
	"time"
)

// job is one entry of the ledger.
//
// Synchronisation, field by field (seed contract items in brackets):
//
//   - id, taskID, createdAt: immutable after Submit; read freely.
//   - state: atomic [1]. Written only while holding mu, inside the critical
//     section that writes the payload, so a reader holding mu sees state and
//     payload together; read without the job's lock by the cheap poll
//     Table.State and by checkInvariants' walk of the retention list.
//   - mu guards req, reqReleased, res, err, startedAt, completedAt and done
//     [2]. Start and the terminal transition read the clock while holding
//     it, so their timestamps are ordered as their critical sections are.
//
// Lock order: table mu, then job mu; never the reverse [5].
//
// Invariants:
//   - state only moves along canTransition.
//   - state.Terminal() <=> completedAt is set.
//   - createdAt <= startedAt <= completedAt, each where set: the clock is
//     monotonic and Start and the terminal transition read it under mu.
//   - reqReleased => req is the zero value: the table holds no reference to
//     the request once TakeRequest moved it out or the job ended.
//   - state.Terminal() => reqReleased: the terminal transition drops a
//     request nobody took, so a job cancelled or expired while PENDING does
//     not keep its payload alive until eviction.
//   - state == Done => res holds the result given to Finish.
//   - state is Failed or TimedOut => err != nil.
//   - done, once created, is closed exactly when state is terminal; it is
//     closed in the same critical section that publishes the terminal
//     state, so no waiter can miss it (D4).
type job[Req, Res any] struct {
	id        string
	taskID    string
	createdAt time.Time

	state atomic.Int32 // a State

	mu          sync.Mutex
	req         Req
	reqReleased bool // req moved out by TakeRequest or dropped by the end
	res         Res
	err         error
	startedAt   time.Time
	completedAt time.Time
	done        chan struct{} // nil until a waiter needs it
}

func (j *job[Req, Res]) loadState() State { return State(j.state.Load()) }

// snapshotLocked returns a consistent view of j.
// j.mu must be held.
func (j *job[Req, Res]) snapshotLocked() Snapshot {
	return Snapshot{
		ID:          j.id,
		TaskID:      j.taskID,
		State:       j.loadState(),
		Err:         j.err,
		CreatedAt:   j.createdAt,
		StartedAt:   j.startedAt,
		CompletedAt: j.completedAt,
	}
}

// terminateLocked moves j to the terminal state to: it writes the payload and
// the completion time, drops the request if nobody took it, publishes the
// state and decrements depth. It reports false, changing nothing, if j is
// already terminal. The caller reads now under j.mu (TimestampOrderInv) and
// wakes the waiters in the same critical section (see terminateJob).
// j.mu must be held.
func (j *job[Req, Res]) terminateLocked(to State, res Res, err error, now time.Time, depth *atomic.Int32) bool {
	if !canTransition(j.loadState(), to) {
		return false
	}
	j.res = res
	j.err = err
	j.completedAt = now
	// Nobody may take the request of an ended job, so the table must not
	// keep it: a job cancelled or expired while PENDING would otherwise
	// hold its payload (a large image) until retention evicts it.
	var zero Req
	j.req, j.reqReleased = zero, true
	// The state first, then the decrement: a submitter that takes the freed
	// slot never finds MaxQueue other jobs still live.
	j.state.Store(int32(to))
	depth.Add(-1)
	return true
}

// wakeLocked wakes every waiter of the terminal job j by closing its wakeup
// channel, if a waiter created one.
// j.mu must be held.
func (j *job[Req, Res]) wakeLocked() {
	if j.done != nil {
		close(j.done)
	}
}

// waitChanLocked returns the channel that is closed when j becomes terminal,
// creating it on first use. j must not be terminal.
// j.mu must be held.
func (j *job[Req, Res]) waitChanLocked() <-chan struct{} {
	if j.done == nil {
		j.done = make(chan struct{})
	}
	return j.done
}

// snapshot returns a consistent view of j, taking j.mu: state, error and
// timestamps are read together, never half of a transition (D1).
func (j *job[Req, Res]) snapshot() Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snapshotLocked()
}
