package jobtable

import (
	"sync/atomic"
	"time"
)

// job is one entry of the ledger.
//
// Synchronisation, field by field (seed contract items in brackets):
//
//   - view.ID, view.TaskID, view.CreatedAt: immutable after Submit; read
//     freely.
//   - state: atomic [1]. Written only while holding mu, inside the critical
//     section that writes the payload and as its last write to the payload,
//     so a reader holding mu sees state and payload together; read without
//     the job's lock by the cheap poll Table.State and by the readers of a
//     terminal job (below).
//   - mu guards the rest of view (State, Err, StartedAt, CompletedAt), req,
//     reqReleased, res and done while the job is live [2]. Start and the
//     terminal transition read the clock while holding it, so their
//     timestamps are ordered as their critical sections are. (jobMutex is
//     sync.Mutex; in the traced build it numbers its critical sections,
//     see trace_section.go.)
//   - Once the job is terminal, view and res are frozen: nothing writes
//     them again. The terminal transition writes them, then stores the
//     terminal state, then closes done, all in one critical section, so
//     view is the job's final snapshot, published before the wakeup. A
//     reader that has loaded a terminal state (final), or received from
//     the closed done (a woken Wait), is ordered after those writes by the
//     atomic store or by the close, and reads view and res without mu
//     (docs/architecture.md, "Waiting").
//
// Lock order: table mu, then job mu; never the reverse [5].
//
// Invariants:
//   - state only moves along canTransition, and view.State == state
//     whenever mu is free.
//   - state.Terminal() <=> view.CompletedAt is set.
//   - view.CreatedAt <= view.StartedAt <= view.CompletedAt, each where set:
//     the clock is monotonic and Start and the terminal transition read it
//     under mu.
//   - reqReleased => req is the zero value: the table holds no reference to
//     the request once TakeRequest moved it out or the job ended.
//   - state.Terminal() => reqReleased: the terminal transition drops a
//     request nobody took, so a job cancelled or expired while PENDING does
//     not keep its payload alive until eviction.
//   - state == Done => res holds the result given to Finish.
//   - state is Failed or TimedOut <=> view.Err != nil.
//   - done, once created, is closed exactly when state is terminal; it is
//     closed in the same critical section that publishes the terminal
//     state, after view is final (contract item 2 of the package doc).
type job[Req, Res any] struct {
	state atomic.Int32 // a State
	// reqReleased is guarded by mu; it sits here to share state's word.
	reqReleased bool // req moved out by TakeRequest or dropped by the end

	// key and digest: the idempotency key the job was submitted under
	// (SubmitKeyed), "" for none, and the request's digest; immutable
	// after Submit.
	key, digest string

	mu   jobMutex
	view Snapshot // the job as Snapshot returns it; frozen once terminal
	req  Req
	res  Res
	done chan struct{} // nil until a waiter needs it

	// hash and pos share a word: the low 32 bits of the id's hash, set and
	// read by the id map's writer, and the job's position in Table.order
	// (modulo 2^32); both under Table.mu.
	hash uint32
	pos  uint32
}

func (j *job[Req, Res]) loadState() State { return State(j.state.Load()) }

// snapshotLocked returns a consistent view of j.
// j.mu must be held.
func (j *job[Req, Res]) snapshotLocked() Snapshot { return j.view }

// final returns the final snapshot of j and true if j is terminal, without
// taking j.mu, or false if j is not terminal yet. The terminal state is
// stored after the final snapshot is written, and nothing writes it again,
// so a load that sees the terminal state is ordered after every write to
// it.
func (j *job[Req, Res]) final() (Snapshot, bool) {
	if !j.loadState().Terminal() {
		return Snapshot{}, false
	}
	return j.view, true
}

// snapshot returns a consistent view of j: state, error and timestamps are
// read together, never half of a transition (D1). A terminal job's final
// snapshot is read without the lock (see final); a live job's under j.mu.
func (j *job[Req, Res]) snapshot() Snapshot {
	if snap, ok := j.final(); ok {
		traceSnapshot(j, snap)
		return snap
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	snap := j.snapshotLocked()
	traceSnapshot(j, snap)
	return snap
}

// setStateLocked moves j to the live state s (RUNNING), in its view and
// in the atomic state.
// j.mu must be held.
func (j *job[Req, Res]) setStateLocked(s State) {
	j.view.State = s
	j.state.Store(int32(s))
}

// terminateLocked moves j to the terminal state to: it writes the payload
// and the completion time, drops the request if nobody took it, publishes
// the state and decrements depth. It reports false, changing nothing, if j
// is already terminal. The caller reads now under j.mu (TimestampOrderInv)
// and wakes the waiters in the same critical section (see terminateJob).
// j.mu must be held.
func (j *job[Req, Res]) terminateLocked(to State, res Res, err error, now time.Time, depth *atomic.Int32) bool {
	ok := canTransition(j.loadState(), to)
	traceEndCheck(j, to, ok)
	if !ok {
		return false
	}
	j.res = res
	j.view.Err = err
	j.view.CompletedAt = now
	j.view.State = to
	// Nobody may take the request of an ended job, so the table must not
	// keep it: a job cancelled or expired while PENDING would otherwise
	// hold its payload (a large image) until retention evicts it.
	var zero Req
	j.req, j.reqReleased = zero, true
	// The final snapshot is written: publish it by storing the state, the
	// last write to the payload. Then the decrement: a submitter that takes
	// the freed slot never finds MaxQueue other jobs still live.
	traceAtomic()
	j.state.Store(int32(to))
	traceTerminated(j, depth.Add(-1))
	return true
}

// wakeLocked wakes every waiter of the terminal job j by closing its wakeup
// channel, if a waiter created one. It must follow terminateLocked, so
// that the final snapshot is published before the wakeup: a woken waiter
// reads it without the lock, ordered after it by the close.
// j.mu must be held.
func (j *job[Req, Res]) wakeLocked() {
	if j.done != nil {
		traceWake(j)
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
