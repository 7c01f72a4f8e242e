package fuzz

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/linearizability"
)

// Operations of a concurrent worker's script, the low nibble of each
// script byte (mod concOps); the high nibble names the job slot.
const (
	concSubmit = iota
	concTake
	concStart
	concFinish
	concFail
	concTimeout
	concSnapshot
	concResult
	concAdvance
	concPeek
	concOps
)

var concOpNames = [concOps]string{"submit", "take", "start", "finish", "fail", "timeout", "snapshot", "result", "advance", "peek"}

// Bounds of one concurrent input.
const (
	concSlots     = 4 // jobs a script can name: j1 ... j4
	concMaxScript = 4 // operations per worker
)

// concSpec is a decoded concurrent input.
type concSpec struct {
	maxQueue     int // 1 ... 3
	maxCompleted int // 1 ... 3
	ttl          bool
	prelude      int        // jobs submitted one by one before the workers start
	scripts      [][]concOp // one per worker
	waiters      []int      // the slot each waiter waits on
	schedule     []release
}

type concOp struct{ kind, slot int }

// decodeConc reads a concurrent input:
//
//	byte 0: MaxQueue-1 (mod 3)
//	byte 1: MaxCompleted-1 (bits 0-1, mod 3); bit 2: JobTTL 1 s, else never
//	byte 2: workers-2 (bits 0-1, mod 3); waiters (bits 2-3, mod 3);
//	        prelude submits (bits 4-5)
//	per worker: script length-1 (mod 4), then one byte per operation:
//	        the operation (low nibble, mod concOps) and slot (high nibble, mod 4)
//	per waiter: its slot (mod 4)
//	then the schedule, one byte per release: who (bits 0-2, mod the
//	        goroutines), yields (bits 3-4), together (bit 5), join
//	        (bit 7). A release of a
//	        goroutine with no step left goes to the next that has one;
//	        steps the schedule leaves unreleased go in turn at its end.
func decodeConc(data []byte) concSpec {
	in := &input{data: data}
	s := concSpec{maxQueue: 1 + in.intn(3)}
	b := in.byte()
	s.maxCompleted, s.ttl = 1+int(b&3)%3, b&4 != 0
	b = in.byte()
	workers, waiters := 2+int(b&3)%3, int(b>>2&3)%3
	s.prelude = int(b >> 4 & 3)
	for range workers {
		script := make([]concOp, 1+in.intn(concMaxScript))
		for i := range script {
			b := in.byte()
			script[i] = concOp{kind: int(b&15) % concOps, slot: int(b>>4) % concSlots}
		}
		s.scripts = append(s.scripts, script)
	}
	for range waiters {
		s.waiters = append(s.waiters, in.intn(concSlots))
	}
	total := len(s.waiters)
	for _, sc := range s.scripts {
		total += len(sc)
	}
	for in.more() && len(s.schedule) < total {
		s.schedule = append(s.schedule, decodeRelease(in.byte()))
	}
	return s
}

func (s concSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxQueue=%d MaxCompleted=%d TTL=%t prelude=%d\n", s.maxQueue, s.maxCompleted, s.ttl, s.prelude)
	for i, sc := range s.scripts {
		fmt.Fprintf(&b, "  worker %d:", i)
		for _, op := range sc {
			fmt.Fprintf(&b, " %s(j%d)", concOpNames[op.kind], op.slot+1)
		}
		b.WriteByte('\n')
	}
	for i, slot := range s.waiters {
		fmt.Fprintf(&b, "  waiter %d: wait(j%d)\n", i, slot+1)
	}
	fmt.Fprintf(&b, "  schedule: %v", s.schedule)
	return b.String()
}

// FuzzConcurrent runs a decoded schedule of concurrent operations against a
// table, with waiters, and checks the outcome: the table's invariants, the
// depth back to zero once a closing client has ended every job, every
// waiter returned by itself, and the recorded history linearizable under
// linearizability.JobModel and AdmissionModel.
func FuzzConcurrent(f *testing.F) {
	for _, s := range concurrentSeeds {
		f.Add(s.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runConcurrent(t, decodeConc(data))
	})
}

func runConcurrent(t *testing.T, spec concSpec) {
	clock := fakeclock.New()
	ttl := time.Duration(-1)
	if spec.ttl {
		ttl = time.Second
	}
	table, err := jobtable.New[string, string](jobtable.Config{
		MaxQueue: spec.maxQueue, MaxCompleted: spec.maxCompleted, JobTTL: ttl,
		Now: clock.Now, NewID: fakeclock.Seq("j"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ledger := stress.TableLedger{T: table}
	rec := stress.NewRecorder()
	bg := context.Background()

	pre := rec.Client(ledger)
	for i := range spec.prelude {
		pre.Submit(bg, "pre"+strconv.Itoa(i), "req-pre"+strconv.Itoa(i)) // recorded
	}

	// Workers: each runs its script, one step per release. A release
	// hands the worker the channel to start on; it is closed already, or
	// closed when the release's group fires.
	steps := 0
	for _, sc := range spec.scripts {
		steps += len(sc)
	}
	// The scheduler's goroutines: the workers, then the waiters.
	var sched scheduler
	for _, sc := range spec.scripts {
		sched.add(len(sc), true)
	}
	for range spec.waiters {
		sched.add(1, false)
	}
	sched.setup()
	var workers sync.WaitGroup
	var peeks peekErrors
	for w, sc := range spec.scripts {
		c := rec.Client(ledger)
		workers.Go(func() {
			for i, op := range sc {
				sched.wait(w)
				if op.kind == concPeek {
					peeks.check(table, slotID(op.slot))
				} else {
					runConcOp(c, clock, op, fmt.Sprintf("w%d.%d", w, i))
				}
				sched.stepDone()
			}
		})
	}

	// Waiters: each waits, with no deadline, on one job. waitCtx ends only
	// when a waiter is found stuck, to let it go.
	waitCtx, stopWaits := context.WithCancel(bg)
	defer stopWaits()
	var waiters sync.WaitGroup
	var returned atomic.Int64
	for k, slot := range spec.waiters {
		c := rec.Client(ledger)
		waiters.Go(func() {
			sched.wait(len(spec.scripts) + k)
			c.Wait(waitCtx, slotID(slot)) // recorded
			returned.Add(1)
		})
	}

	// The schedule.
	sched.run(spec.schedule)
	workers.Wait()

	// Close: end every job still live, so that every waiter must return.
	closer := rec.Client(ledger)
	for n := 1; n <= spec.prelude+steps; n++ {
		closer.Timeout(bg, "j"+strconv.Itoa(n), "closed") // recorded
	}
	stuck, settled := settleWaiters(&returned, len(spec.waiters))
	// A waiter that lost its wakeup is blocked on a channel nobody will
	// close: check the table while it is still blocked, then let it go.
	invErr := table.CheckInvariants()
	stopWaits()
	waiters.Wait()

	if err := peeks.err(); err != nil {
		t.Errorf("torn snapshot: %v", err)
	}
	if stuck > 0 {
		t.Errorf("%d waiter(s) blocked in Wait after every job ended (lost wakeup)", stuck)
	}
	if !settled {
		t.Errorf("waiters neither returned nor blocked after %d rounds", settleRounds)
	}
	if invErr != nil {
		t.Errorf("invariants: %v", invErr)
	}
	if d := table.Depth(); d != 0 {
		t.Errorf("depth %d after every job ended, want 0", d)
	}
	rep := linearizability.Check(rec.History(), linearizability.CheckConfig{MaxQueue: spec.maxQueue, Timeout: 30 * time.Second})
	if rep.Verdict != linearizability.Linearizable {
		t.Errorf("%v: %s", rep.Verdict, rep.Message)
		if rep.Visualization != "" {
			t.Logf("visualization: %s", rep.Visualization)
		}
	}
	if t.Failed() {
		t.Logf("input:\n%v\nhistory:\n%s", spec, describeHistory(rec))
	}
}

func slotID(slot int) string { return "j" + strconv.Itoa(slot+1) }

// runConcOp runs one worker step through the recording client c.
func runConcOp(c *stress.Client, clock *fakeclock.Clock, op concOp, tag string) {
	bg, id := context.Background(), slotID(op.slot)
	switch op.kind {
	case concSubmit:
		c.Submit(bg, "task-"+tag, "req-"+tag) // recorded
	case concTake:
		c.TakeRequest(bg, id) // recorded
	case concStart:
		c.Start(bg, id) // recorded
	case concFinish:
		c.Finish(bg, id, "res-"+tag) // recorded
	case concFail:
		c.Fail(bg, id, "fail-"+tag) // recorded
	case concTimeout:
		c.Timeout(bg, id, "timeout-"+tag) // recorded
	case concSnapshot:
		c.Snapshot(bg, id) // recorded
	case concResult:
		c.Result(bg, id) // recorded
	case concAdvance:
		clock.Advance(time.Second)
	}
}

// describeHistory renders the recorded history in call order.
func describeHistory(rec *stress.Recorder) string {
	var b strings.Builder
	for _, op := range rec.History() {
		in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
		ret := strconv.FormatInt(op.Return, 10)
		if op.Return == linearizability.Pending {
			ret = "never"
		}
		fmt.Fprintf(&b, "  client %d [%d, %s] %s\n", op.ClientId, op.Call, ret, linearizability.Describe(in, out))
	}
	return b.String()
}
