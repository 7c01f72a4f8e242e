package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// stressRun bounds the stress: it runs for minTime (a fifth of it with
// -short) and until minAdmitted jobs were admitted, so that a slow store
// still contests admission and evicts, and never past hardCap; every
// loop is bounded in count too.
const (
	stressMinTime     = 500 * time.Millisecond
	stressMinAdmitted = 300
	stressHardCap     = 20 * time.Second
	stressMaxOps      = 1_000_000 // per goroutine
)

// testStress is the design's stress: 4 submitters, 2 runners, 3 pollers
// and 2 waiters on one store, against a small MaxQueue so that admission
// is contested and small retention bounds so that eviction runs all along.
// At the end: the depth is back to zero, every admitted job ended exactly
// once, ids were unique, no poller saw an impossible snapshot or a job
// going back, no waiter missed an end, and the store's invariants hold.
func testStress(t *testing.T, s Store) {
	const (
		submitters, runners, pollers, waiters = 4, 2, 3, 2
		maxQueue                              = 6
	)
	minTime := stressMinTime
	if testing.Short() {
		minTime /= 5
	}
	f := open(t, s, ledger.Config{MaxQueue: maxQueue, JobTTL: 50 * time.Millisecond, MaxCompleted: 64})

	var (
		stop      = make(chan struct{})
		queue     = make(chan string, maxQueue) // admitted jobs for the runners
		freed     = make(chan struct{}, maxQueue)
		enough    = make(chan struct{}) // closed at stressMinAdmitted
		recentMu  sync.Mutex
		recent    []string // the last admitted ids, for pollers and waiters
		admitted  sync.Map // id -> *atomic.Int32, winning terminal calls
		nAdmitted atomic.Int64
		nRejected atomic.Int64
		nPolls    atomic.Int64
		nWaits    atomic.Int64
		producers sync.WaitGroup
		consumers sync.WaitGroup
		observers sync.WaitGroup
	)
	waitCtx, cancelWaits := context.WithCancel(context.Background())
	defer cancelWaits()
	pick := func(r *rand.Rand) string {
		recentMu.Lock()
		defer recentMu.Unlock()
		if len(recent) == 0 {
			return "none"
		}
		return recent[r.IntN(len(recent))]
	}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}

	for sub := range submitters {
		producers.Go(func() {
			for i := 0; i < stressMaxOps && !stopped(); i++ {
				if sub == 0 && i%2 == 0 {
					f.clock.Advance(10 * time.Millisecond) // let TTL eviction happen
				}
				id, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: fmt.Sprintf("task-%d-%d", sub, i)}, "p")
				if errors.Is(err, ledger.ErrQueueFull) {
					nRejected.Add(1)
					select { // until a runner frees a slot; submitters then race for it
					case <-freed:
					case <-stop:
					}
					continue
				}
				if err != nil {
					t.Errorf("Submit: %v", err)
					return
				}
				if _, dup := admitted.LoadOrStore(id, new(atomic.Int32)); dup {
					t.Errorf("id %s issued twice", id)
				}
				if nAdmitted.Add(1) == stressMinAdmitted {
					close(enough)
				}
				recentMu.Lock()
				recent = append(recent, id)
				if len(recent) > 64 {
					recent = recent[1:]
				}
				recentMu.Unlock()
				queue <- id // never blocks for long: at most maxQueue jobs are live
			}
		})
	}
	for r := range runners {
		consumers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for id := range queue {
				if _, err := f.l.TakeRequest(f.ctx, id); err != nil {
					t.Errorf("TakeRequest(%s): %v", id, err)
				}
				if _, err := f.l.Start(f.ctx, id); err != nil {
					t.Errorf("Start(%s): %v", id, err)
				}
				var end error
				switch rng.IntN(3) {
				case 0:
					_, end = f.l.Finish(f.ctx, id, "res-"+id)
				case 1:
					_, end = f.l.Fail(f.ctx, id, errBoom)
				default:
					_, end = f.l.Timeout(f.ctx, id, errBoom)
				}
				if end != nil {
					t.Errorf("ending %s: %v", id, end)
					continue
				}
				wins, _ := admitted.Load(id)
				wins.(*atomic.Int32).Add(1)
				select {
				case freed <- struct{}{}:
				default:
				}
				// A second terminal call is refused (or finds the job
				// already evicted).
				if _, err := f.l.Finish(f.ctx, id, "late"); !errors.Is(err, ledger.ErrTerminal) && !errors.Is(err, ledger.ErrNotFound) {
					t.Errorf("second terminal call on %s: %v, want ErrTerminal", id, err)
				}
			}
		})
	}
	for p := range pollers {
		observers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 2))
			last := map[string]ledger.State{}
			observe := func(id string, st ledger.State) {
				if prev, ok := last[id]; ok && prev != st && (prev.Terminal() || st == ledgertype.Pending) {
					t.Errorf("job %s went back from %v to %v", id, prev, st)
				}
				last[id] = st
			}
			for i := 0; i < stressMaxOps && !stopped(); i++ {
				id := pick(rng)
				snap, err := f.l.Snapshot(f.ctx, id)
				if errors.Is(err, ledger.ErrNotFound) {
					continue // evicted, or nothing admitted yet
				}
				if err != nil {
					t.Errorf("Snapshot(%s): %v", id, err)
					return
				}
				nPolls.Add(1)
				if err := possible(snap); err != nil {
					t.Errorf("a poller saw an impossible snapshot: %v", err)
				}
				observe(id, snap.State)
				if st, err := f.l.State(f.ctx, id); err == nil {
					observe(id, st) // the cheap poll never runs behind a snapshot
				}
				res, rs, err := f.l.Result(f.ctx, id)
				switch {
				case err == nil && res != "res-"+id:
					t.Errorf("job %s: DONE with result %q", id, res)
				case errors.Is(err, ledger.ErrNotDone) && rs.State == ledgertype.Done:
					t.Errorf("job %s: ErrNotDone with state DONE", id)
				}
			}
		})
	}
	for w := range waiters {
		observers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; i < stressMaxOps && !stopped(); i++ {
				snap, err := f.l.Wait(waitCtx, pick(rng))
				if errors.Is(err, ledger.ErrNotFound) {
					continue
				}
				if err != nil {
					// Only the end of the run cancels waitCtx, and by then
					// every job is terminal: the waiter missed a wakeup.
					t.Errorf("a waiter returned %v on %s job %s", err, snap.State, snap.ID)
					return
				}
				nWaits.Add(1)
				if !snap.State.Terminal() {
					t.Errorf("Wait returned a live job: %v", snap.State)
				}
			}
		})
	}

	start := time.Now()
	<-time.After(minTime)
	select {
	case <-enough:
	case <-time.After(stressHardCap - minTime):
		t.Logf("stopped at the hard cap of %v with %d jobs admitted", stressHardCap, nAdmitted.Load())
	}
	close(stop)
	producers.Wait()
	close(queue)
	consumers.Wait() // every admitted job is terminal now
	observersDone := make(chan struct{})
	go func() { observers.Wait(); close(observersDone) }()
	select {
	case <-observersDone:
	case <-time.After(lostWakeupGrace):
		t.Errorf("a waiter was still blocked %v after every job ended (lost wakeup)", lostWakeupGrace)
		cancelWaits()
		<-observersDone
	}

	require.Equal(t, 0, f.depth(), "the depth returns to zero")
	admitted.Range(func(id, wins any) bool {
		if n := wins.(*atomic.Int32).Load(); n != 1 {
			t.Errorf("job %s ended %d times", id, n)
		}
		return true
	})
	require.NoError(t, f.checkInvariants(), "quiescent, the store's invariants hold")
	st := f.l.Stats()
	t.Logf("%v: %d admitted, %d rejected, %d polls, %d waits; evicted %d by TTL, %d by LRU",
		time.Since(start).Round(time.Millisecond), nAdmitted.Load(), nRejected.Load(), nPolls.Load(), nWaits.Load(), st.EvictedTTL, st.EvictedLRU)
	require.Positive(t, nAdmitted.Load())
	require.Positive(t, nRejected.Load(), "admission was contested")
	require.Positive(t, st.EvictedTTL+st.EvictedLRU, "eviction ran")
}
