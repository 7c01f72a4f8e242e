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
	"sync/atomic"
	"testing"
	"time"
)

// The trace driver: short runs of the design's stress shape (submitters
// racing for a small queue, runners that start, take and end their jobs,
// timers that time out any job, waiters and pollers on any job, misusers
// that call Start, TakeRequest and Finish on a job that is not theirs),
// each under a random schedule, each logged as one trace for
// spec/trace.mjs. In one run of four (seed a multiple of 4) six submitters
// call SubmitKeyed instead of Submit, racing on fresh keys, and the checker
// follows the trace with spec/IdempotencyKeys.tla as well. Racers meet the
// runners at the end of a job: a poller reads it as it ends, a waiter
// registers on it. A lister walks the listing by pages a few times a run,
// and the checker follows its pages with spec/Listing.tla as well.
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
		head, err := TraceHead{MaxQueue: traceMaxQueue, MaxCompleted: traceMaxCompleted, Seed: &seed, Keyed: keyed}.Line()
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, fmt.Sprintf("trace-%04d.ndjson", seed))
		if err := os.WriteFile(name, append(head, b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// traceKeys is how many idempotency keys a keyed run submits under, besides
// the fresh keys its submitters race on; traceKeyRacers is how many keyed
// submitters it has.
const (
	traceKeys      = 8
	traceKeyRacers = 6
)

// The racers on the job a runner is ending: raceLoops goroutines, pollers
// and waiters in turn, the pollers taking at most traceRaceReads snapshots
// of one job.
const (
	raceLoops      = 2
	traceRaceReads = 6
)

// The lister's walks: traceWalks in a run, each at most traceWalkPages
// pages (a walk ends far sooner: MaxQueue live jobs and the terminal ones
// retention keeps are a dozen at most), with a limit from traceListMin to
// traceListMax that the seed picks.
const (
	traceWalks     = 6
	traceWalkPages = 100
	traceListMin   = 2
	traceListMax   = 4
)

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
	const runners, timerLoops, waiterLoops, pollerLoops, misuserLoops = 3, 1, 1, 1, 1
	// A keyed run has more submitters: they race on fresh keys (below).
	submitters := 2
	if keyed {
		submitters = traceKeyRacers
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		known   []string
		next    = map[string]int{}
		work    = make(chan string, jobs)
		subDone sync.WaitGroup
		// The job a runner is about to end, and how many were
		// announced: racers (a poller, a waiter) call on that job at
		// the moment it ends.
		endID   string
		endSeq  int
		endBusy bool // a runner's announced end is under way
		// endNow is the announcement whose end call starts now, and
		// endReady the one a racer waits on: the runner and the racer
		// meet there, each on a processor, so that their calls overlap.
		endNow, endReady atomic.Int64
		// arrived counts the keyed submitters that reached each round
		// of the race on fresh keys (a submitter makes fewer than
		// 20*jobs calls).
		arrived = make([]atomic.Int32, 20*jobs)
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
	knownCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(known)
	}
	// spinUntil spins (bounded) until cond holds, yielding only now and
	// then, so that two goroutines that meet through it both run when it
	// returns.
	spinUntil := func(cond func() bool) {
		for k := 0; k < 1<<16 && !cond(); k++ {
			if k%1024 == 1023 {
				runtime.Gosched()
			}
		}
	}
	// awaitEnd returns the job a runner announced after announcement
	// *seen, waiting (bounded) for one, once its end call starts; false
	// if none came. It spins on the start, yielding only now and then, so
	// that the racer runs on one processor while the runner ends the job
	// on the other.
	awaitEnd := func(seen *int) (string, bool) {
		for range 2000 {
			mu.Lock()
			id, n := endID, endSeq
			mu.Unlock()
			if n != *seen {
				*seen = n
				endReady.Store(int64(n))
				spinUntil(func() bool { return endNow.Load() == int64(n) })
				return id, true
			}
			runtime.Gosched()
		}
		return "", false
	}
	// race waits (bounded) until every keyed submitter reached round. It
	// spins, yielding only now and then, so that the submitters leave it
	// together, each on a processor, and their calls overlap.
	race := func(round int) {
		arrived[round].Add(1)
		for k := 0; k < 1<<20 && int(arrived[round].Load()) < submitters; k++ {
			if k%64 == 63 {
				runtime.Gosched()
			}
		}
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
			round := 0
			for admitted, tries := 0, 0; admitted < share && tries < 20*share; tries++ {
				var id string
				var err error
				if keyed {
					// Each call is a thread of its own in
					// IdempotencyKeys.tla (its submitters submit once):
					// kS.N, call N of submitter S, which JobTable.tla
					// follows as its submitter kS. One call in eight
					// sends another digest: a conflict if the key is
					// held. Three calls in four are a round of the race:
					// every keyed submitter submits one fresh key at
					// once, which one of them must admit and the others
					// replay (a check of the key apart from its
					// insertion lets two of them admit).
					key := fmt.Sprintf("key%d", r.IntN(traceKeys))
					if tries%4 != 3 {
						race(round)
						key = fmt.Sprintf("fresh%d", round)
						round++
					}
					traceAs(fmt.Sprintf("k%d.%d", s+1, tries))
					digest := "d"
					if r.IntN(8) == 0 {
						digest = "other"
					}
					var replayed bool
					id, replayed, err = tab.SubmitKeyed(Submission{TaskID: "task", Key: key, Digest: digest}, 0)
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
				// Announce the end, unless another runner's is under
				// way, let a racer reach the job, and start the end
				// with it.
				mu.Lock()
				announced := !endBusy
				if announced {
					endBusy, endID, endSeq = true, id, endSeq+1
					seq := int64(endSeq)
					mu.Unlock()
					spinUntil(func() bool { return endReady.Load() == seq })
					endNow.Store(seq)
				} else {
					mu.Unlock()
				}
				switch r.IntN(3) {
				case 0:
					_, _ = tab.Finish(id, 1)
				case 1:
					_, _ = tab.Fail(id, errors.New("failed"))
				default:
					_, _ = tab.Timeout(id, context.DeadlineExceeded)
				}
				if announced {
					mu.Lock()
					endBusy = false
					mu.Unlock()
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
	// The racers: a poller that snapshots the job a runner is ending,
	// over and over until it sees it end (a snapshot must show the state
	// and the payload of one side of the transition), and a waiter that
	// waits on it (its check and its registration must be one critical
	// section against the end).
	for n := range raceLoops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard()
			r := rand.New(rand.NewPCG(seed, 600+uint64(n)))
			seen := 0
			for k := 0; k < jobs/4; k++ {
				id, ok := awaitEnd(&seen)
				if !ok {
					continue
				}
				if n%2 == 1 {
					traceAs(role("w"))
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					if _, err := tab.Wait(ctx, id); errors.Is(err, context.DeadlineExceeded) {
						traceNote("WaitTimeout", id)
					}
					cancel()
					continue
				}
				// One read in two is spaced from the one before by a
				// short random spin, so that the reads leave the runner
				// room to reach the end's critical section and fall at
				// any point of it.
				var lag atomic.Int64
				for i := range traceRaceReads {
					if i%2 == 1 {
						for range r.IntN(256) {
							lag.Add(1)
						}
					}
					traceAs(role("p"))
					if s, err := tab.Snapshot(id); err != nil || s.State.Terminal() {
						break
					}
				}
			}
		}()
	}
	// The lister: walks of the listing, from the newest job to the last
	// page, with a small limit (the same for the run), so that admissions
	// and evictions fall between the pages of a walk. Walk w starts once
	// w/traceWalks of the run's jobs are known, so the walks are spread
	// over the run. Every walk is thread l1: the spec's walker, whose
	// walks follow one another.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer guard()
		r := rand.New(rand.NewPCG(seed, 700))
		limit := traceListMin + int(seed%uint64(traceListMax-traceListMin+1))
		for w := range traceWalks {
			for k := 0; k < 1<<12 && knownCount() < w*jobs/traceWalks; k++ {
				runtime.Gosched()
			}
			traceAs("l1")
			before := uint64(0)
			for range traceWalkPages {
				_, next, err := tab.List(ListQuery{Limit: limit, Before: before})
				if err != nil || next == 0 {
					break
				}
				before = next
				yield(r)
			}
			traceAs("")
			yield(r)
		}
	}()
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
