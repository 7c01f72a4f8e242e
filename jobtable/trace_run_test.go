//go:build jobtable_trace

package jobtable

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The trace driver: short runs of the design's stress shape (submitters
// racing for a small queue, runners that start, take and end their jobs,
// timers that time out any job, waiters and pollers on any job, misusers
// that call Start, TakeRequest and Finish on a job that is not theirs),
// each under a random schedule, each logged as one trace for
// spec/trace.mjs. In one run of four (seed a multiple of 4) the submitters
// call SubmitKeyed under a few keys instead of Submit, and the checker
// follows the trace with spec/IdempotencyKeys.tla as well.
//
//	go test -tags jobtable_trace -run '^TestTraceRuns$' ./jobtable \
//	    -trace.dir DIR -trace.n 100 -trace.seed 1
var (
	traceDir  = flag.String("trace.dir", "", "write the traces to this folder")
	traceN    = flag.Int("trace.n", 3, "number of runs")
	traceSeed = flag.Uint64("trace.seed", 1, "seed of the first run; run k uses seed+k")
	traceJobs = flag.Int("trace.jobs", 40, "jobs admitted per run")
)

// The configuration every run uses, written in each trace's header: the
// clock never moves, so retention is by the LRU bound only.
const (
	traceMaxQueue     = 4
	traceMaxCompleted = 3
)

func TestTraceRuns(t *testing.T) {
	dir := *traceDir
	if dir == "" {
		dir = t.TempDir()
	}
	for k := range *traceN {
		seed := *traceSeed + uint64(k)
		keyed := seed%4 == 0
		events := traceRun(t, seed, *traceJobs, keyed)
		b, err := writeTrace(events)
		if err != nil {
			t.Fatal(err)
		}
		head := fmt.Sprintf(`{"config":{"MaxQueue":%d,"MaxCompleted":%d},"seed":%d,"keyed":%t}`+"\n",
			traceMaxQueue, traceMaxCompleted, seed, keyed)
		name := filepath.Join(dir, fmt.Sprintf("trace-%04d.ndjson", seed))
		if err := os.WriteFile(name, append([]byte(head), b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// traceKeys is how many idempotency keys a keyed run submits under.
const traceKeys = 8

// traceRun runs one schedule and returns its log.
func traceRun(tb testing.TB, seed uint64, jobs int, keyed bool) []traceEvent {
	epoch := time.Unix(0, 0)
	tab, err := New[int, int](Config{
		MaxQueue:     traceMaxQueue,
		MaxCompleted: traceMaxCompleted,
		JobTTL:       time.Hour,
		Now:          func() time.Time { return epoch },
	})
	if err != nil {
		tb.Fatal(err)
	}
	const submitters, runners, timerLoops, waiterLoops, pollerLoops, misuserLoops = 2, 3, 1, 2, 1, 1
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		known   []string
		next    = map[string]int{}
		work    = make(chan string, jobs)
		subDone sync.WaitGroup
	)
	// role returns a fresh name of a one-shot role (a timer, a waiter: each
	// makes one call in the spec).
	role := func(p string) string {
		mu.Lock()
		defer mu.Unlock()
		next[p]++
		return fmt.Sprintf("%s%d", p, next[p])
	}
	pick := func(r *rand.Rand) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(known) == 0 {
			return "", false
		}
		return known[r.IntN(len(known))], true
	}
	// pickRecent returns one of the last few jobs admitted, most likely
	// still live, or any job one time in four.
	pickRecent := func(r *rand.Rand) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(known) == 0 {
			return "", false
		}
		if r.IntN(4) == 0 {
			return known[r.IntN(len(known))], true
		}
		return known[len(known)-1-r.IntN(min(len(known), 4))], true
	}
	yield := func(r *rand.Rand) {
		for range r.IntN(3) {
			runtime.Gosched()
		}
	}
	// A mutant may make a call panic: the goroutine notes it in the log
	// (no spec action matches the note) and stops, so that the trace up
	// to there is still written and checked.
	guard := func() {
		if r := recover(); r != nil {
			traceNote("Panic", "")
		}
	}
	traceBegin()
	share := jobs / submitters
	for s := range submitters {
		wg.Add(1)
		subDone.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			defer subDone.Done()
			r := rand.New(rand.NewPCG(seed, uint64(s)))
			traceAs(fmt.Sprintf("s%d", s+1))
			// Until share jobs are admitted; a full queue is refused
			// at most 20 times a job, then the submitter gives up.
			for admitted, tries := 0, 0; admitted < share && tries < 20*share; tries++ {
				var id string
				var err error
				if keyed {
					// Each call is a thread of its own in
					// IdempotencyKeys.tla (its submitters submit once):
					// kS.N, call N of submitter S, which JobTable.tla
					// follows as its submitter kS. One call in eight
					// sends another digest: a conflict if the key is
					// held.
					traceAs(fmt.Sprintf("k%d.%d", s+1, tries))
					digest := "d"
					if r.IntN(8) == 0 {
						digest = "other"
					}
					var replayed bool
					id, replayed, err = tab.SubmitKeyed(fmt.Sprintf("key%d", r.IntN(traceKeys)), digest, "task", 0)
					if replayed || errors.Is(err, ErrKeyConflict) {
						yield(r)
						continue
					}
				} else {
					id, err = tab.Submit("task", 0)
				}
				if errors.Is(err, ErrQueueFull) {
					// Let the runners free a slot (Depth logs nothing),
					// so that refusals do not fill the trace.
					for k := 0; k < 100 && tab.Depth() >= traceMaxQueue; k++ {
						runtime.Gosched()
					}
					continue
				}
				admitted++
				mu.Lock()
				known = append(known, id)
				mu.Unlock()
				work <- id
				yield(r)
			}
		}()
	}
	go func() { subDone.Wait(); close(work) }()
	for n := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 100+uint64(n)))
			traceAs(fmt.Sprintf("r%d", n+1))
			for id := range work {
				yield(r)
				if _, err := tab.Start(id); err != nil {
					continue
				}
				yield(r)
				_, _ = tab.TakeRequest(id)
				yield(r)
				switch r.IntN(3) {
				case 0:
					_, _ = tab.Finish(id, 1)
				case 1:
					_, _ = tab.Fail(id, errors.New("failed"))
				default:
					_, _ = tab.Timeout(id, context.DeadlineExceeded)
				}
			}
		}()
	}
	for n := range timerLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 200+uint64(n)))
			for k := 0; k < jobs/4; {
				yield(r)
				id, ok := pick(r)
				if !ok {
					runtime.Gosched()
					continue
				}
				k++
				traceAs(role("t"))
				_, _ = tab.Timeout(id, context.DeadlineExceeded)
			}
		}()
	}
	for n := range misuserLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 500+uint64(n)))
			for k := 0; k < jobs/8; {
				yield(r)
				id, ok := pickRecent(r)
				if !ok {
					runtime.Gosched()
					continue
				}
				k++
				// The spec's misuser: Start, then TakeRequest or not,
				// then Finish, whatever each returns. A Start that
				// finds no job ends it.
				traceAs(role("m"))
				if _, err := tab.Start(id); errors.Is(err, ErrNotFound) {
					continue
				}
				yield(r)
				if r.IntN(3) == 0 {
					traceNote("MisuseSkip", id)
				} else {
					_, _ = tab.TakeRequest(id)
				}
				yield(r)
				_, _ = tab.Finish(id, 2)
			}
		}()
	}
	for n := range waiterLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 300+uint64(n)))
			for k := 0; k < jobs/4; {
				yield(r)
				id, ok := pickRecent(r)
				if !ok {
					runtime.Gosched()
					continue
				}
				k++
				traceAs(role("w"))
				// One wait in three has a context that has already ended
				// (the spec's WaitCancel); the others give up only after
				// a second, which no run should reach: a lost wakeup,
				// noted, which no spec action matches.
				if r.IntN(3) == 0 {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					_, _ = tab.Wait(ctx, id)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if _, err := tab.Wait(ctx, id); errors.Is(err, context.DeadlineExceeded) {
					traceNote("WaitTimeout", id)
				}
				cancel()
			}
		}()
	}
	for n := range pollerLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 400+uint64(n)))
			for k := 0; k < jobs/4; {
				yield(r)
				id, ok := pick(r)
				if !ok {
					runtime.Gosched()
					continue
				}
				k++
				traceAs(role("p"))
				_, _ = tab.Snapshot(id)
				yield(r)
				_, _, _ = tab.Result(id)
			}
		}()
	}
	wg.Wait()
	return traceEnd()
}
