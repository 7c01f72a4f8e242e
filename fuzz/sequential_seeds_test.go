package fuzz

// Seed inputs of FuzzSequential, built with the helpers below so that each
// reads as the steps it decodes to.

// Header indexes (see seqMaxQueue, seqTTL, seqMaxCompleted).
const (
	ttlDefault, ttlNever, ttl1s, ttl2s, ttl3s = 0, 1, 2, 3, 4
	mcDefault, mcUnbounded, mc1, mc2, mc3     = 0, 1, 2, 3, 4
)

// seq encodes a header and steps.
func seq(maxQueue, ttl, maxCompleted byte, steps ...[2]byte) []byte {
	b := []byte{maxQueue, ttl, maxCompleted}
	for _, s := range steps {
		b = append(b, s[0], s[1])
	}
	return b
}

// Steps. back names a job relative to the newest issued (0 the newest);
// back 7 always names an id never issued while fewer than 8 exist.
func submit(task byte) [2]byte  { return [2]byte{seqSubmit, task} }
func take(back byte) [2]byte    { return [2]byte{seqTake, back} }
func start(back byte) [2]byte   { return [2]byte{seqStart, back} }
func finish(back byte) [2]byte  { return [2]byte{seqFinish, back} }
func failJob(back byte) [2]byte { return [2]byte{seqFail, back} }
func timeout(back byte) [2]byte { return [2]byte{seqTimeout, back} }
func snap(back byte) [2]byte    { return [2]byte{seqSnapshot, back} }
func result(back byte) [2]byte  { return [2]byte{seqResult, back} }
func wait(back byte) [2]byte    { return [2]byte{seqWait, back} }
func advance(half byte) [2]byte { return [2]byte{seqAdvance, half} }

const unknown byte = 7

var sequentialSeeds = [][]byte{
	// The happy path: PENDING -> RUNNING -> DONE, the request taken once,
	// the result repeatable, a wait on a finished job answered at once.
	seq(2, ttlDefault, mcDefault, submit(1), snap(0), take(0), take(0), start(0), snap(0),
		result(0), finish(0), result(0), result(0), wait(0), snap(0)),
	// PENDING -> FAILED directly; Result is not done; Start after the end
	// is refused; the end dropped the request, so it cannot be taken.
	seq(2, ttlDefault, mcDefault, submit(2), failJob(0), result(0), start(0), take(0), snap(0)),
	// RUNNING -> TIMEOUT, then every other terminal call is refused and
	// changes nothing: the depth falls exactly once.
	seq(1, ttlDefault, mcDefault, submit(3), start(0), timeout(0), finish(0), failJob(0), timeout(0),
		submit(4), submit(5)),
	// PENDING -> TIMEOUT and PENDING -> DONE without a start.
	seq(3, ttlDefault, mcDefault, submit(1), submit(2), timeout(1), finish(0), result(0), result(1)),
	// Start twice, and Start on every terminal state: only PENDING may
	// enter RUNNING, terminal states are absorbing.
	seq(4, ttlNever, mcUnbounded, submit(1), start(0), start(0), finish(0), start(0),
		submit(2), failJob(0), start(0), submit(3), start(0), timeout(0), start(0), snap(0), snap(1), snap(2)),
	// Admission: the third submit at MaxQueue 2 is refused; a terminal
	// call frees a slot.
	seq(2, ttlDefault, mcDefault, submit(1), submit(2), submit(3), finish(0), submit(4), submit(5),
		start(1), failJob(1), submit(6)),
	// MaxQueue 0 admits nothing.
	seq(0, ttlDefault, mcDefault, submit(1), submit(2), snap(0)),
	// JobTTL 1 s: a job finished 1 s ago (exactly the TTL) is evicted by
	// the next submit, not before; one finished 0.5 s ago stays.
	seq(4, ttl1s, mcUnbounded, submit(1), finish(0), advance(1), submit(2), finish(0), advance(1),
		snap(1), snap(0), submit(3), snap(2), snap(1), result(1), advance(7), submit(4)),
	// JobTTL: live jobs never expire, however old.
	seq(2, ttl1s, mcUnbounded, submit(1), start(0), advance(7), advance(7), submit(2), snap(1),
		finish(1), advance(2), submit(3), snap(2)),
	// MaxCompleted 1: the least recently completed goes, in completion
	// order, not creation order.
	seq(4, ttlNever, mc1, submit(1), submit(2), finish(0), finish(1), submit(3), snap(1), snap(2),
		result(1), result(2)),
	// MaxCompleted 1 with only live jobs: nothing may be evicted.
	seq(4, ttlNever, mc1, submit(1), submit(2), submit(3), submit(4), snap(3), start(3), finish(2),
		submit(5), finish(3), submit(6)),
	// TTL then LRU in one submit: expired jobs first, then the bound.
	seq(4, ttl2s, mc2, submit(1), finish(0), advance(2), submit(2), finish(0), submit(3), finish(0),
		submit(4), finish(0), advance(3), submit(5), snap(4), snap(3), snap(2), snap(1)),
	// Default retention (10 min, 1024) keeps everything in a short run.
	seq(3, ttlDefault, mcDefault, submit(1), finish(0), advance(7), submit(2), finish(0), submit(3), snap(1), snap(2)),
	// Wait with an ended context: the current view and the context's
	// error on a live job, the final view on a terminal one.
	seq(2, ttlDefault, mcDefault, submit(1), wait(0), start(0), wait(0), finish(0), wait(0), wait(unknown)),
	// Every operation on an id never issued.
	seq(1, ttlDefault, mcDefault, take(unknown), start(unknown), finish(unknown), failJob(unknown),
		timeout(unknown), snap(unknown), result(unknown), wait(unknown), submit(1), take(unknown), finish(unknown)),
	// Operations on an evicted job answer not found.
	seq(1, ttlNever, mc1, submit(1), finish(0), submit(2), finish(0), submit(3), take(2), start(2),
		finish(2), snap(2), result(2), wait(2)),
}
