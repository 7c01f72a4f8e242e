//go:build jobtable_trace

package fuzz

import (
	"reflect"
	"testing"
)

// Seed inputs of FuzzTrace, written as specs and encoded in the format
// decodeTrace reads. Threads are numbered from 0 in the order listed (the
// who of a release); slots from 0, by admission order. Each comment says
// what the seed covers; the schedule helpers are FuzzConcurrent's.

func submitter(n int) traceThread       { return traceThread{role: roleSubmitter, n: n} }
func runner(n, outcome int) traceThread { return traceThread{role: roleRunner, n: n, outcome: outcome} }
func timer(slot int) traceThread        { return traceThread{role: roleTimer, slot: slot} }
func poller(slot int) traceThread       { return traceThread{role: rolePoller, slot: slot} }
func waiter(slot int) traceThread       { return traceThread{role: roleWaiter, slot: slot} }
func endedWaiter(slot int) traceThread  { return traceThread{role: roleWaiter, slot: slot, flag: true} }
func misuser(slot int) traceThread      { return traceThread{role: roleMisuser, slot: slot} }
func skipper(slot int) traceThread      { return traceThread{role: roleMisuser, slot: slot, flag: true} }
func threads(t ...traceThread) []traceThread {
	return t
}

// Runner outcomes.
const (
	endFinish = iota
	endFail
	endTimeout
)

// inTurn releases each call of whos in turn, each joined before the next
// (a waiter whose context never ends is not joined: it may block).
func inTurn(whos ...int) []release {
	rs := make([]release, len(whos))
	for i, w := range whos {
		rs[i] = relJoin(w)
	}
	return rs
}

// pair starts a call of a and one of b at the same instant, and joins
// both.
func pair(a, b int) []release { return []release{relWith(a), relJoin(b)} }

// then joins parts of a schedule.
func then(parts ...[]release) []release {
	var rs []release
	for _, p := range parts {
		rs = append(rs, p...)
	}
	return rs
}

var traceSeeds = []traceSpec{
	// 0. One job through its life: admitted, started, taken, finished.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFinish)),
		schedule: inTurn(0, 1, 1, 1)},
	// 1. A full queue: the second submit is refused (ErrQueueFull) until
	// the runner ends the first job; the closing runner takes the third.
	{maxQueue: 1, maxCompleted: 3, threads: threads(submitter(3), runner(1, endFinish)),
		schedule: inTurn(0, 0, 1, 1, 1, 0)},
	// 2. Two submitters race for the last slot (D3's race): one is
	// refused, or a CAS retries.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), submitter(1), runner(2, endFinish)),
		schedule: pair(0, 1)},
	// 3. Three submitters race at MaxQueue 2, one slot taken before.
	{maxQueue: 2, maxCompleted: 2, threads: threads(submitter(2), submitter(1), submitter(1), runner(2, endFail)),
		schedule: then(inTurn(0), []release{relWith(0), relWith(1), relJoin(2)})},
	// 4. Eviction by MaxCompleted 1: each job ends before the next is
	// admitted, and the third insertion evicts the first job; a poller
	// then reads it (a lookup that finds nothing).
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(3), runner(3, endFinish), poller(0)),
		schedule: inTurn(0, 1, 1, 1, 0, 1, 1, 1, 0, 2, 2)},
	// 5. A timer times a queued job out before the runner starts it:
	// the runner's Start is refused (ErrNotPending).
	{maxQueue: 2, maxCompleted: 2, threads: threads(submitter(1), timer(0), runner(1, endFinish)),
		schedule: inTurn(0, 1, 2)},
	// 6. A timer races the runner's Finish at the end of the job: one
	// ends it, the other is refused (ErrTerminal).
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFinish), timer(0)),
		schedule: then(inTurn(0, 1, 1), pair(2, 1))},
	// 7. A waiter registers as the job ends (D4's window): its check
	// and the taking of the wakeup channel race the terminal call.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFail), waiter(0)),
		schedule: then(inTurn(0, 1, 1), pair(2, 1))},
	// 8. A waiter on a RUNNING job, its release yielding so that it most
	// likely registers and blocks before the runner's Timeout wakes it.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endTimeout), waiter(0)),
		schedule: then(inTurn(0, 1), []release{{who: 2, yields: 3}}, inTurn(1, 1))},
	// 9. A waiter whose context has ended, on a PENDING job: it
	// registers, its select takes ctx.Done (WaitCancel), and it returns
	// the snapshot it reads then.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), endedWaiter(0), runner(1, endFinish)),
		schedule: inTurn(0, 1, 2, 2, 2)},
	// 10. A waiter whose context has ended, on a job already ended: the
	// terminal check alone.
	{maxQueue: 1, maxCompleted: 2, threads: threads(submitter(1), runner(1, endFinish), endedWaiter(0)),
		schedule: inTurn(0, 1, 1, 1, 2)},
	// 11. A waiter with an ended context races the end of the job: its
	// select may find both the wakeup and the context ready.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFinish), endedWaiter(0)),
		schedule: then(inTurn(0, 1, 1), pair(2, 1))},
	// 12. Calls on a job that was never admitted: a timer, a poller and
	// a waiter whose slot names no job call on an id the table never
	// issued.
	{maxQueue: 1, maxCompleted: 1, threads: threads(timer(5), poller(6), waiter(7), submitter(1)),
		schedule: inTurn(0, 1, 1, 2, 3)},
	// 13. A poller reads a RUNNING job (under the job's mutex), then its
	// Result once it has ended.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFinish), poller(0)),
		schedule: inTurn(0, 1, 2, 1, 1, 2)},
	// 14. A poller's Snapshot races the end of the job (D1's window):
	// it must see one side of the transition, state and payload.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFail), poller(0)),
		schedule: then(inTurn(0, 1, 1), pair(2, 1), inTurn(2))},
	// 15. A poller's Result races the end of the job.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFinish), poller(0)),
		schedule: then(inTurn(0, 1, 1, 2), pair(2, 1))},
	// 16. A misuser on a RUNNING job: its Start is refused
	// (ErrNotPending), its TakeRequest too (ErrRequestTaken), and its
	// Finish ends the runner's job, whose own end is then refused.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), runner(1, endFail), misuser(0)),
		schedule: inTurn(0, 1, 1, 2, 2, 2, 1)},
	// 17. A misuser on a PENDING job: it starts, takes and finishes it;
	// the runner's Start is then refused.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), misuser(0), runner(1, endFinish)),
		schedule: inTurn(0, 1, 1, 1, 2)},
	// 18. A misuser that leaves TakeRequest out races the runner's Start
	// of a PENDING job: one of the two starts it.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), skipper(0), runner(1, endTimeout)),
		schedule: then(inTurn(0), pair(1, 2), inTurn(1, 2, 1, 2))},
	// 19. A misuser on an ended job: its Start, TakeRequest (ErrTerminal)
	// and Finish are all refused.
	{maxQueue: 1, maxCompleted: 2, threads: threads(submitter(1), runner(1, endFinish), misuser(0)),
		schedule: inTurn(0, 1, 1, 1, 2, 2, 2)},
	// 20. A misuser on an evicted job: its Start finds nothing and it
	// stops.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(3), runner(3, endFinish), misuser(0)),
		schedule: inTurn(0, 1, 1, 1, 0, 1, 1, 1, 0, 2)},
	// 21. A misuser released before any job is admitted makes no call.
	{maxQueue: 1, maxCompleted: 1, threads: threads(misuser(0), submitter(1), runner(1, endFinish)),
		schedule: inTurn(0, 0, 0, 1, 2)},
	// 22. Two misusers on one PENDING job, each call together with the
	// other's: one Start wins, the other is refused; the Finishes race.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), misuser(0), skipper(0), runner(1, endFinish)),
		schedule: then(inTurn(0), pair(1, 2), pair(1, 2), pair(1, 2))},
	// 23. A submit races the end that frees the one slot: refused, or
	// admitted once the depth drops.
	{maxQueue: 1, maxCompleted: 2, threads: threads(submitter(2), runner(2, endFinish)),
		schedule: then(inTurn(0, 1, 1), pair(1, 0))},
	// 24. A timer ends a queued job and later admissions evict it
	// before the runner reaches it: the runner's Start finds nothing.
	{maxQueue: 3, maxCompleted: 1, threads: threads(submitter(3), timer(0), timer(1), timer(2), runner(1, endFinish)),
		schedule: inTurn(0, 1, 0, 2, 0, 3, 4)},
	// 25. A poller's Snapshot of a job, then its Result after the job was
	// evicted between the two.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(3), runner(3, endFinish), poller(0)),
		schedule: inTurn(0, 1, 1, 1, 2, 0, 1, 1, 1, 0, 2)},
	// 26. A waiter and a timer on one PENDING job, together: the timer's
	// end wakes the waiter, or the waiter sees the job ended.
	{maxQueue: 1, maxCompleted: 1, threads: threads(submitter(1), waiter(0), timer(0), runner(1, endFinish)),
		schedule: then(inTurn(0), pair(1, 2), inTurn(3))},
	// 27. Two runners end two jobs at once, with a waiter on each: the
	// table mutex orders the two ends and their retention.
	{maxQueue: 2, maxCompleted: 1, threads: threads(submitter(2), runner(1, endFinish), runner(1, endFail), waiter(0), waiter(1)),
		schedule: then(inTurn(0, 0, 1, 2, 1, 2), []release{{who: 3, yields: 3}, {who: 4, yields: 3}}, pair(1, 2))},
	// 28. A runner of four jobs against a submitter of four at MaxQueue
	// 2, its ends rotating Finish, Fail, Timeout, Finish.
	{maxQueue: 2, maxCompleted: 2, threads: threads(submitter(4), runner(4, endFinish)),
		schedule: inTurn(0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1)},
	// 29. Eight threads, every role, in groups joined now and then: the
	// mix the fuzz engine starts from.
	{maxQueue: 2, maxCompleted: 1, threads: threads(submitter(2), submitter(2), runner(2, endFinish), runner(2, endTimeout),
		timer(1), poller(0), waiter(2), misuser(1)),
		schedule: schedule(relWith(0), relJoin(1), rel(2), relWith(3), relJoin(4), rel(5), relWith(6), rel(7),
			rel(2), relWith(3), relJoin(2), rel(0), relWith(1), rel(7), relWith(5), relJoin(3))},
	// 30. Every release together with the next, nothing joined: the
	// whole run in overlapping pairs.
	{maxQueue: 3, maxCompleted: 2, threads: threads(submitter(3), runner(2, endFail), endedWaiter(0), poller(1), misuser(2)),
		schedule: schedule(relWith(0), relWith(1), relWith(0), relWith(2), relWith(1), relWith(3), relWith(0), relWith(4),
			relWith(1), relWith(4), relWith(3), rel(4))},
}

// TestTraceSeedsEncode checks that every seed decodes to the spec it was
// written as, so that the comments on the seeds say what runs.
func TestTraceSeedsEncode(t *testing.T) {
	for i, s := range traceSeeds {
		if got := decodeTrace(s.encode()); !reflect.DeepEqual(got, s) {
			t.Errorf("seed %d decodes to\n%v\nwant\n%v", i, got, s)
		}
	}
}
