package jobtable

import (
	"sync/atomic"
	"time"
)

// job is one entry of the ledger: the fields of the Snapshot it answers
// (but State: the atomic state is the one copy of it), its request and
// result, and its bookkeeping. A retained job costs its size in memory
// for as long as retention keeps it, so the fields are laid out without
// padding and the idempotency key, which few jobs hold, lives in the
// table's key index (docs/performance.md, "Memory").
//
// Synchronisation, field by field (seed contract items in brackets):
//
//   - id, taskID, createdAt: immutable after Submit; read freely.
//   - keyed: immutable after Submit: the job holds an idempotency key,
//     which the table's key index keeps (keyed.go).
//   - state: atomic [1]. Written only while holding mu, inside the critical
//     section that writes the payload and as its last write to the payload,
//     so a reader holding mu sees state and payload together; read without
//     the job's lock by the cheap poll Table.State and by the readers of a
//     terminal job (below). It is the snapshot's State: no other copy.
//   - mu guards err, startedAt, completedAt, req, reqReleased, res and
//     done while the job is live [2]. Start and the terminal transition
//     read the clock while holding it, so their timestamps are ordered as
//     their critical sections are. (jobMutex is sync.Mutex; in the traced
//     build it numbers its critical sections, see trace_section.go.)
//   - Once the job is terminal, err, startedAt, completedAt and res are
//     frozen: nothing writes them again. The terminal transition writes
//     them, then stores the terminal state, then closes done, all in one
//     critical section, so they are the job's final snapshot, published
//     before the wakeup. A reader that has loaded a terminal state (final),
//     or received from the closed done (a woken Wait), is ordered after
//     those writes by the atomic store or by the close, and reads them
//     without mu (docs/architecture.md, "Waiting").
//   - pos, hash, ord: under Table.mu. pos is the job's position in
//     Table.order (modulo 2^32), rewritten when the order compacts; hash
//     is the low 32 bits of the id's hash, set and read by the id map's
//     writer; ord is the admission ordinal, written once by the insertion.
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
//   - state is Failed or TimedOut <=> err != nil.
//   - done, once created, is closed exactly when state is terminal; it is
//     closed in the same critical section that publishes the terminal
//     state, after the final snapshot is written (contract item 2 of the
//     package doc).
type job[Req, Res any] struct {
	state atomic.Int32 // a State
	pos   uint32       // shares state's word
	hash  uint32
	// reqReleased (guarded by mu) and keyed share hash's word.
	reqReleased bool // req moved out by TakeRequest or dropped by the end
	keyed       bool

	mu jobMutex

	id, taskID             string
	err                    error
	createdAt              time.Time
	startedAt, completedAt time.Time
	ord                    uint64

	req  Req
	res  Res
	done chan struct{} // nil until a waiter needs it
}

// ordinal returns j's admission ordinal, for the admission order.
// Table.mu must be held.
func (j *job[Req, Res]) ordinal() uint64 { return j.ord }

func (j *job[Req, Res]) loadState() State { return State(j.state.Load()) }

// snapshotAs returns j's snapshot with state s. j.mu must be held, or s
// must be a terminal state loaded from j.state (or j.done received): the
// fields it reads are final then, and need no lock.
func (j *job[Req, Res]) snapshotAs(s State) Snapshot {
	return Snapshot{ID: j.id, TaskID: j.taskID, State: s, Err: j.err,
		CreatedAt: j.createdAt, StartedAt: j.startedAt, CompletedAt: j.completedAt}
}

// snapshotLocked returns a consistent view of j.
// j.mu must be held.
func (j *job[Req, Res]) snapshotLocked() Snapshot { return j.snapshotAs(j.loadState()) }

// final returns the final snapshot of j and true if j is terminal, without
// taking j.mu, or false if j is not terminal yet. The terminal state is
// stored after the final snapshot is written, and nothing writes it again,
// so a load that sees the terminal state is ordered after every write to
// it.
func (j *job[Req, Res]) final() (Snapshot, bool) {
	s := j.loadState()
	if !s.Terminal() {
		return Snapshot{}, false
	}
	return j.snapshotAs(s), true
}

// snapshot returns a consistent view of j: state, error and timestamps are
// read together, never half of a transition. A terminal job's final
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

// setStateLocked moves j to the live state s (RUNNING).
// j.mu must be held.
func (j *job[Req, Res]) setStateLocked(s State) { j.state.Store(int32(s)) }

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
	j.err = err
	j.completedAt = now
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
