//go:build jobtable_trace

package fuzz

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
)

// FuzzTrace, built with the tag jobtable_trace only, turns the fuzz
// engine's orderings into traces that spec/trace.mjs checks against
// spec/JobTable.tla: the input is a few threads of the spec's own roles
// and a schedule that releases one API call at a time (the scheduler
// FuzzConcurrent uses), run on the real table with the trace log on.
//
//	go test -tags jobtable_trace -run '^FuzzTrace$' ./fuzz -trace.dir DIR
//	go test -tags jobtable_trace -run '^$' -fuzz '^FuzzTrace$' ./fuzz
//
// With -trace.dir each input's trace is written there, one file per input,
// for spec/trace.mjs (make trace-check replays the seeds and the committed
// corpus so).
var traceDir = flag.String("trace.dir", "", "FuzzTrace: write each input's trace to this folder")

func FuzzTrace(f *testing.F) {
	for _, s := range traceSeeds {
		f.Add(s.encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runTrace(t, decodeTrace(data))
	})
}

func runTrace(t *testing.T, spec traceSpec) {
	// The clock never moves, as in the trace runs: the trace module's
	// TTL and MaxTime (spec/trace.mjs, traceCfg) leave retention to the
	// MaxCompleted bound.
	epoch := time.Unix(0, 0)
	table, err := jobtable.New[int, int](jobtable.Config{
		MaxQueue: spec.maxQueue, MaxCompleted: spec.maxCompleted, JobTTL: time.Hour,
		Now: func() time.Time { return epoch }, NewID: fakeclock.Seq("j"),
	})
	if err != nil {
		t.Fatal(err)
	}
	submits := 0
	for _, th := range spec.threads {
		if th.role == roleSubmitter {
			submits += th.n
		}
	}
	h := &traceHarness{table: table, work: make(chan string, submits)}
	waitCtx, stopWaits := context.WithCancel(context.Background())
	defer stopWaits()

	// One goroutine per thread, released call by call. A waiter whose
	// context never ends may block until the closing below, so it is not
	// joined; every other call returns by itself.
	var sched scheduler
	names := spec.names()
	actors := make([]*traceActor, len(spec.threads))
	live := 0 // waiters that may block
	for i, th := range spec.threads {
		actors[i] = &traceActor{h: h, th: th, name: names[i], waitCtx: waitCtx, outcome: th.outcome}
		blocks := th.role == roleWaiter && !th.flag
		if blocks {
			live++
		}
		sched.add(th.steps(), !blocks)
	}
	sched.setup()
	jobtable.TraceBegin()
	var threads, waiters sync.WaitGroup
	var returned atomic.Int64
	for i, a := range actors {
		blocks := a.th.role == roleWaiter && !a.th.flag
		g := &threads
		if blocks {
			g = &waiters
		}
		g.Go(func() {
			jobtable.TraceAs(a.name)
			for range a.th.steps() {
				sched.wait(i)
				a.step()
				if !blocks {
					sched.stepDone()
				}
			}
			if blocks {
				returned.Add(1)
			}
		})
	}
	sched.run(spec.schedule)
	threads.Wait()

	// Close, each call still one of a spec role: each runner ends the job
	// it holds, then a runner of its own drains the work channel, starting
	// and finishing every job no runner took. Every job is then ended:
	// a misuser always ends what it started.
	for _, a := range actors {
		if a.th.role == roleRunner {
			jobtable.TraceAs(a.name)
			a.finishJob()
		}
	}
	closer := traceActor{h: h, th: traceThread{role: roleRunner}, name: fmt.Sprintf("r%d", countRole(spec, roleRunner)+1)}
	jobtable.TraceAs(closer.name)
	// Each round takes one job off the channel; no thread adds any now.
	for len(h.work) > 0 && !closer.stopped {
		closer.step()
		closer.finishJob()
	}
	jobtable.TraceAs("")

	stuck, settled := settleWaiters(&returned, live)
	// A waiter that lost its wakeup is blocked on a channel nobody will
	// close: check the table while it is still blocked, then let it go.
	invErr := table.CheckInvariants()
	depth := table.Depth()
	stopWaits()
	waiters.Wait()
	log, err := jobtable.TraceEnd()
	if err != nil {
		t.Fatal(err)
	}
	if *traceDir != "" {
		writeTrace(t, spec, log)
	}

	for _, p := range h.panics {
		t.Errorf("a call panicked: %s", p)
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
	if depth != 0 {
		t.Errorf("depth %d after every job ended, want 0", depth)
	}
	if t.Failed() {
		t.Logf("input:\n%v\ntrace:\n%s", spec, log)
	}
}

func countRole(spec traceSpec, role int) int {
	n := 0
	for _, th := range spec.threads {
		if th.role == role {
			n++
		}
	}
	return n
}

// writeTrace writes the trace of the input t runs to *traceDir, named
// after the input (seed#3, or a corpus file's name), with the header
// spec/trace.mjs reads.
func writeTrace(t *testing.T, spec traceSpec, log []byte) {
	name := strings.NewReplacer("/", "-", "#", "-").Replace(t.Name())
	head, err := jobtable.TraceHead{MaxQueue: spec.maxQueue, MaxCompleted: spec.maxCompleted, Name: name}.Line()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*traceDir, name+".ndjson"), append(head, log...), 0o644); err != nil {
		t.Fatal(err)
	}
}
