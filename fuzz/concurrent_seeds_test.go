package fuzz

// Seed inputs of FuzzConcurrent, written as specs and encoded in the format
// decodeConc reads.

// encode returns the input that decodeConc decodes to s (s's fields must be
// within the decoder's ranges).
func (s concSpec) encode() []byte {
	ttl := byte(0)
	if s.ttl {
		ttl = 4
	}
	b := []byte{
		byte(s.maxQueue - 1),
		byte(s.maxCompleted-1) | ttl,
		byte(len(s.scripts)-2) | byte(len(s.waiters))<<2 | byte(s.prelude)<<4,
	}
	for _, sc := range s.scripts {
		b = append(b, byte(len(sc)-1))
		for _, op := range sc {
			b = append(b, byte(op.kind)|byte(op.slot)<<4)
		}
	}
	for _, slot := range s.waiters {
		b = append(b, byte(slot))
	}
	for _, r := range s.schedule {
		b = append(b, r.byte())
	}
	return b
}

// Script and schedule helpers. Slots are 0-based: slot 0 is job j1.
func op(kind, slot int) concOp               { return concOp{kind: kind, slot: slot} }
func script(ops ...concOp) []concOp          { return ops }
func rel(who int) release                    { return release{who: who} }
func relJoin(who int) release                { return release{who: who, join: true} }
func relYield(who, yields int) release       { return release{who: who, yields: yields} }
func schedule(rs ...release) []release       { return rs }
func relWith(who int) release                { return release{who: who, together: true} }
func workerScripts(s ...[]concOp) [][]concOp { return s }

var concurrentSeeds = []concSpec{
	// D3, the admission TOCTOU: two submits race for the last slot at
	// MaxQueue 1; at most one may be admitted.
	{maxQueue: 1, maxCompleted: 1,
		scripts:  workerScripts(script(op(concSubmit, 0)), script(op(concSubmit, 0))),
		schedule: schedule(relWith(0), rel(1))},
	// D3 with one slot taken before the race, at MaxQueue 2, and three
	// submitters started one after another.
	{maxQueue: 2, maxCompleted: 2, prelude: 1,
		scripts:  workerScripts(script(op(concSubmit, 0)), script(op(concSubmit, 0)), script(op(concSubmit, 0))),
		schedule: schedule(rel(0), rel(1), rel(2))},
	// D2, the unsynchronised depth read: submits start together with the
	// terminal calls that lower the depth.
	{maxQueue: 2, maxCompleted: 3, prelude: 2,
		scripts:  workerScripts(script(op(concSubmit, 0), op(concSubmit, 0)), script(op(concFinish, 0), op(concFail, 1))),
		schedule: schedule(relWith(0), rel(1), relWith(0), rel(1))},
	// D4, the lost wakeup: a waiter looks at a pending job just as it
	// finishes. The waiter is released first, the finish right after.
	{maxQueue: 1, maxCompleted: 1, prelude: 1,
		scripts:  workerScripts(script(op(concFinish, 0)), script(op(concSnapshot, 0))),
		waiters:  []int{0},
		schedule: schedule(rel(2), rel(0), rel(1))},
	// D4 with two waiters on a running job, started together with its
	// timeout.
	{maxQueue: 2, maxCompleted: 2, prelude: 1,
		scripts:  workerScripts(script(op(concStart, 0), op(concTimeout, 0)), script(op(concResult, 0))),
		waiters:  []int{0, 0},
		schedule: schedule(relJoin(0), relWith(2), relWith(3), rel(0), rel(1))},
	// D1, the torn read: unrecorded snapshots start together with Start
	// and Fail, so a view may pair a state with the payload of another;
	// the race detector sees the unlocked reads whatever the timing.
	{maxQueue: 2, maxCompleted: 2, prelude: 1,
		scripts: workerScripts(script(op(concStart, 0), op(concFail, 0)),
			script(op(concPeek, 0), op(concPeek, 0), op(concSnapshot, 0), op(concPeek, 0))),
		schedule: schedule(relWith(1), rel(0), relWith(1), rel(0), rel(1), rel(1))},
	// D1 on the DONE path: recorded reads start together with Finish.
	{maxQueue: 1, maxCompleted: 1, prelude: 1,
		scripts:  workerScripts(script(op(concFinish, 0)), script(op(concSnapshot, 0), op(concPeek, 0))),
		schedule: schedule(relWith(1), rel(0), rel(1))},
	// Exactly one terminal call wins: Finish, Fail and Timeout start
	// together on one job, then submits check that the depth fell once.
	{maxQueue: 1, maxCompleted: 3, prelude: 1,
		scripts: workerScripts(script(op(concFinish, 0), op(concSubmit, 1)), script(op(concFail, 0)),
			script(op(concTimeout, 0), op(concSubmit, 1))),
		schedule: schedule(relWith(0), relWith(1), rel(2), relJoin(0), rel(2))},
	// A Start racing the end of the job: after the end it must be refused.
	{maxQueue: 2, maxCompleted: 2, prelude: 1,
		scripts:  workerScripts(script(op(concFinish, 0), op(concStart, 0)), script(op(concStart, 0), op(concSnapshot, 0))),
		schedule: schedule(relJoin(0), relWith(1), rel(0), rel(1))},
	// Retention while jobs are live: MaxCompleted 1 with live jobs and
	// submits that evict; a live job must never vanish.
	{maxQueue: 3, maxCompleted: 1, prelude: 2,
		scripts: workerScripts(script(op(concSubmit, 2), op(concFinish, 2), op(concSubmit, 3)),
			script(op(concStart, 0), op(concSnapshot, 1), op(concSnapshot, 0)), script(op(concFinish, 1), op(concSnapshot, 1))),
		waiters:  []int{0},
		schedule: schedule(rel(0), rel(1), rel(2), rel(3), rel(0), rel(1), rel(2), rel(0))},
	// The whole lifecycle in parallel: a runner takes, starts and finishes
	// while a poller reads and a waiter waits.
	{maxQueue: 2, maxCompleted: 2, prelude: 1,
		scripts: workerScripts(script(op(concTake, 0), op(concStart, 0), op(concTake, 0), op(concFinish, 0)),
			script(op(concSnapshot, 0), op(concResult, 0), op(concPeek, 0), op(concResult, 0))),
		waiters:  []int{0},
		schedule: schedule(rel(2), relWith(0), rel(1), relWith(0), rel(1), relWith(0), rel(1), relWith(0), rel(1))},
	// TTL eviction racing reads: the clock moves past the TTL and a submit
	// evicts a job that another worker is reading.
	{maxQueue: 2, maxCompleted: 3, ttl: true, prelude: 1,
		scripts: workerScripts(script(op(concFinish, 0), op(concAdvance, 0), op(concSubmit, 1), op(concSnapshot, 1)),
			script(op(concResult, 0), op(concSnapshot, 0), op(concResult, 0))),
		waiters:  []int{1},
		schedule: schedule(relJoin(0), relJoin(0), relWith(0), rel(1), rel(1), rel(2), rel(0), rel(1))},
	// Operations on ids not yet issued race with the submit that issues
	// them.
	{maxQueue: 3, maxCompleted: 2,
		scripts:  workerScripts(script(op(concSubmit, 0), op(concSubmit, 0)), script(op(concTake, 1), op(concStart, 1), op(concFail, 1))),
		waiters:  []int{1},
		schedule: schedule(rel(2), relYield(1, 1), rel(0), rel(1), rel(0), rel(1))},
}
