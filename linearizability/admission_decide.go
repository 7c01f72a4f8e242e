package linearizability

// The admission projection is checked by a sweep specialised to the
// bounded counter rather than by porcupine's general search, whose cost
// grows with the whole history when the history is never quiescent (a 3 s
// HTTP run is one segment of some 20,000 operations, and porcupine gave no
// answer in 60 s). The sweep decides exactly what porcupine decides for
// AdmissionModel and HTTPAdmissionModel, in time linear in the history and
// exponential only in the operations in flight at one time; the
// differential test in admission_decide_test.go checks that on thousands of
// generated and mutated histories.
//
// # The problem
//
// admission_input.go turns a projection into operations on a counter c
// with bound L, each with a window [call, return] (return +inf when
// pending forever):
//
//   - inc: an accepted submit, needs c < L, adds one. At the HTTP level it
//     carries its job, which it makes live.
//   - dec: a winning terminal call, needs c > 0, removes one.
//   - end: HTTP only, the derived end of a job, needs the job live (its inc
//     done, itself not yet), removes one. A read that saw the job live is
//     folded into windows: it only requires inc <= read <= end in the
//     order, which holds for some placement of the read exactly when the
//     inc's point is at most the read's return and the end's point at least
//     the read's call; so the inc's window ends at the earliest such return
//     and the end's starts at the latest such call.
//   - full: a rejected submit, needs c >= L.
//   - optInc, optDec: a submit or terminal call of unknown outcome, pending
//     forever. The model applies one as "+1 if c < L" or "-1 if c > 0". Where
//     it had no effect it can be dropped, and one dropped can be put back
//     after everything else, where it is always legal and changes nothing
//     that anyone checks; so the history is linearizable exactly when it is
//     for some choice of these that take effect, each then an inc or dec
//     with the window [call, +inf].
//
// A history is linearizable when some total order of all its operations is
// legal for the counter and puts x before y whenever x returned before y
// was called.
//
// # The proof
//
// Instants. Call the distinct call times instants. Given a linearization,
// move each operation's point back to the latest instant at or before it:
// still within its window (its own call is an instant), and the order is
// kept. So a linearization is a legal sequence in which each operation sits
// at an instant of its window, instants non-decreasing; within one instant
// any order is allowed. The sweep walks the instants in order.
//
// Lemma 1 (full is eager). A full operation changes nothing, so it may move
// to the first place after its call where c >= L, if there is one within
// its window; if there is none, no linearization exists.
//
// Lemma 2 (decrements are lazy, earliest deadline first). Fix the sequence
// of increments of a linearization (which instant, which order). Then
// there is a linearization with the same increments in which every
// decrement (dec, end, and an optDec that takes effect) is done either
// (room) immediately before an increment that would otherwise find c >= L,
// choosing among the decrements available there (called, its job live for
// an end, its window started) one with the earliest deadline, a pending
// forever one last; or (due) at the end of the last instant of its window.
// Proof: fulls change nothing and every step below keeps c as high or
// higher wherever one stands, so they stay legal and ride along. Compare
// the given linearization S with the one G built by the rule, and take
// the first place where they differ. (a) G does a room decrement e before
// an increment: S, whose increment would find c >= L there, also does a
// decrement d there; if d is not e, S does e later, no later than e's
// deadline, which is no later than d's: swap them (same effect on c, both
// available at both places). If e is pending forever, so is d, and two
// such are interchangeable. (b) S does a decrement d where G does none:
// move d in S later, to just before the first later increment that would
// find c >= L without it, or to the end of its last instant, whichever
// comes first. In between c is one higher: fulls and other decrements still
// hold, increments still find c < L by the choice of the stopping place,
// and d itself finds c > 0 and its job live. (c) G does the due decrements
// at an instant's end: S does them there too, as their windows end; they
// commute but for c > 0, which G's order (decs first) serves best. Each
// step lengthens the common prefix or moves a decrement later in its
// window, so the steps end, with G legal.
//
// Lemma 3 (increments without a job are interchangeable). Two such
// increments available at the same instant differ only in their deadlines,
// so the one with the earlier deadline may go first (exchange), a pending
// forever one (optInc) last. Increments with a job are not
// interchangeable (each frees a different end) and are all tried.
//
// The sweep. By the lemmas, a linearization exists exactly when one exists
// in which fulls are eager, decrements follow Lemma 2, and at each instant
// some sequence of increments is done (Lemma 3's order for those without a
// job). What the future of such a linearization can do depends only on the
// state after an instant: c, which of the operations still in their
// window are done, the live jobs, and how many unknown operations took
// effect. The sweep keeps the set of reachable states: at each instant it
// releases the operations called there, closes the set under "do one more
// increment" (with its room decrements and eager fulls), does the due
// decrements, and drops each state in which an operation whose window ends
// before the next instant is not done. The history is linearizable exactly
// when a state survives the last instant, where every operation is due.
// Every step checks the counter's preconditions, so each surviving state
// is reached by a legal sequence (soundness); by the lemmas every
// linearization has a canonical twin that the sweep follows (completeness).
//
// The states hold per-operation bits only for operations in flight, so a
// sweep costs O(instants x states x in-flight operations). With 4 to 27
// operations in flight in the stress runs it holds a handful of states.

// maxSlots is how many incs, decs and fulls may be in flight at one
// instant: their done bits are a uint64.
const maxSlots = 64

// maxStates bounds the states of one instant. Past it the sweep gives up
// and the caller falls back to porcupine; no stress run comes near it.
const maxStates = 1 << 16

type dkind uint8

const (
	dInc dkind = iota
	dDec
	dFull
	dEnd
	dOptInc
	dOptDec
)

// dop is one operation of the counter problem.
type dop struct {
	kind dkind
	// job is the job of an inc or end at the HTTP level; -1 otherwise.
	job int32
	// ri and di are the first and last instants of its window.
	ri, di int32
	// src is its index in the projection.
	src int32
}

// dproblem is a projection as a counter problem (see admission_input.go).
type dproblem struct {
	limit, init int32
	times       []int64 // the instants: distinct call times, ascending
	ops         []dop
	jobInc      []int32   // job -> its inc
	jobEnd      []int32   // job -> its end, -1 if none
	jobOps      [][]int32 // job -> its 202, End and reads in the projection
	rel, due    csr       // instant -> ops whose window starts / ends there
}

// csr lists, for each instant, the operations of one event there.
type csr struct {
	start []int32 // instant k's list is list[start[k]:start[k+1]]
	list  []int32
}

func (c csr) at(k int32) []int32 { return c.list[c.start[k]:c.start[k+1]] }

// dstate is one reachable state after an instant.
type dstate struct {
	c int32
	// up and down count the optIncs and optDecs that took effect.
	up, down int32
	// done has a bit per slot: the operation in it is done.
	done uint64
	// live holds the live jobs (HTTP), sorted, 4 bytes each.
	live string
}
