package jobtable_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

var stressDuration = flag.Duration("stress.duration", 3*time.Second,
	"how long TestStress runs (a tenth of it with -short)")

// TestStress is the design's stress test: 4 submitters, 2 runners, 3
// pollers and 2 waiters on one table, against a small MaxQueue so that
// admission is contested and small retention bounds so that eviction runs
// all along. At the end it asserts that depth returned to zero, every
// admitted job terminated exactly once, ids were unique, no poller saw an
// impossible state and no waiter missed a completion.
func TestStress(t *testing.T) {
	const (
		submitters, runners, pollers, waiters = 4, 2, 3, 2
		maxQueue                              = 6
		maxOps                                = 10_000_000 // per goroutine: every loop is bounded in count too
		// The run lasts its duration and until minAdmitted jobs were
		// admitted, so that a starved machine still contests admission and
		// evicts; hardCap bounds it all the same.
		minAdmitted = 1000
		hardCap     = time.Minute
	)
	d := *stressDuration
	if testing.Short() {
		d /= 10
	}
	tab, clock := newTable(t, jobtable.Config{
		MaxQueue: maxQueue, JobTTL: 50 * time.Millisecond, MaxCompleted: 64,
		NewID: jobtable.DefaultNewID, // the default source: its ids must be unique too
	})

	var (
		stop      = make(chan struct{})
		queue     = make(chan string, maxQueue) // admitted jobs for the runners
		freed     = make(chan struct{}, maxQueue)
		enough    = make(chan struct{}) // closed at minAdmitted
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

	for s := range submitters {
		producers.Go(func() {
			for i := 0; i < maxOps && !stopped(); i++ {
				if s == 0 && i%2 == 0 {
					clock.Advance(10 * time.Millisecond) // let TTL eviction happen
				}
				id, err := tab.Submit(fmt.Sprintf("task-%d-%d", s, i), req{payload: "p"})
				if errors.Is(err, jobtable.ErrQueueFull) {
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
				if nAdmitted.Add(1) == minAdmitted {
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
				if _, err := tab.TakeRequest(id); err != nil {
					t.Errorf("TakeRequest(%s): %v", id, err)
				}
				if _, err := tab.Start(id); err != nil {
					t.Errorf("Start(%s): %v", id, err)
				}
				var end error
				switch rng.IntN(3) {
				case 0:
					_, end = tab.Finish(id, "res-"+id)
				case 1:
					_, end = tab.Fail(id, errBoom)
				default:
					_, end = tab.Timeout(id, errBoom)
				}
				if end != nil {
					t.Errorf("terminating %s: %v", id, end)
					continue
				}
				wins, _ := admitted.Load(id)
				wins.(*atomic.Int32).Add(1)
				select {
				case freed <- struct{}{}:
				default:
				}
				// A second terminal call is a no-op (or finds the job
				// already evicted).
				if _, err := tab.Finish(id, "late"); !errors.Is(err, jobtable.ErrTerminal) && !errors.Is(err, jobtable.ErrNotFound) {
					t.Errorf("second terminal call on %s: %v, want ErrTerminal", id, err)
				}
			}
		})
	}
	for p := range pollers {
		observers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 2))
			last := map[string]jobtable.State{}
			observe := func(id string, s jobtable.State) {
				if prev, ok := last[id]; ok && prev != s && (prev.Terminal() || s == ledgertype.Pending) {
					t.Errorf("job %s went back from %v to %v", id, prev, s)
				}
				last[id] = s
			}
			for i := 0; i < maxOps && !stopped(); i++ {
				id := pick(rng)
				snap, err := tab.Snapshot(id)
				if errors.Is(err, jobtable.ErrNotFound) {
					continue // evicted, or nothing admitted yet
				}
				nPolls.Add(1)
				if err := possible(snap); err != nil {
					t.Errorf("poller saw an impossible snapshot: %v", err)
				}
				observe(id, snap.State)
				if st, err := tab.State(id); err == nil {
					observe(id, st) // the lock-free poll never runs behind a snapshot
				}
				res, rs, err := tab.Result(id)
				switch {
				case err == nil && res != "res-"+id:
					t.Errorf("job %s: DONE with result %q", id, res)
				case errors.Is(err, jobtable.ErrNotDone) && rs.State == ledgertype.Done:
					t.Errorf("job %s: ErrNotDone with state DONE", id)
				}
			}
		})
	}
	for w := range waiters {
		observers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; i < maxOps && !stopped(); i++ {
				snap, err := tab.Wait(waitCtx, pick(rng))
				if errors.Is(err, jobtable.ErrNotFound) {
					continue
				}
				if err != nil {
					// Only the end of the run cancels waitCtx, and by then
					// every job is terminal: the waiter missed a wakeup.
					t.Errorf("waiter returned %v on %s job %s", err, snap.State, snap.ID)
					return
				}
				nWaits.Add(1)
				if !snap.State.Terminal() {
					t.Errorf("Wait returned non-terminal %v", snap.State)
				}
			}
		})
	}

	start := time.Now()
	timer := time.NewTimer(d)
	<-timer.C
	select {
	case <-enough:
	case <-time.After(hardCap):
	}
	close(stop)
	producers.Wait()
	close(queue)
	consumers.Wait() // every admitted job is terminal now
	observersDone := make(chan struct{})
	go func() { observers.Wait(); close(observersDone) }()
	if _, err := awaitReturn(t, tab, observersDone); err != nil {
		t.Error(err)
		cancelWaits()
		<-observersDone
	}

	require.Equal(t, 0, tab.Depth(), "depth returns to zero")
	admitted.Range(func(id, wins any) bool {
		if n := wins.(*atomic.Int32).Load(); n != 1 {
			t.Errorf("job %s terminated %d times", id, n)
		}
		return true
	})
	st := tab.Stats()
	t.Logf("%v: %d admitted, %d rejected, %d polls, %d waits; evicted %d by TTL, %d by LRU",
		time.Since(start).Round(time.Millisecond), nAdmitted.Load(), nRejected.Load(), nPolls.Load(), nWaits.Load(), st.EvictedTTL, st.EvictedLRU)
	require.Positive(t, nAdmitted.Load())
	require.Positive(t, nRejected.Load(), "admission was contested")
	require.Positive(t, st.EvictedTTL+st.EvictedLRU, "eviction ran")
}

// possible reports why a snapshot shows a state no correct table can be in.
func possible(s jobtable.Snapshot) error {
	switch {
	case s.State.Terminal() == s.CompletedAt.IsZero():
		return fmt.Errorf("%s: %v with completion time %v", s.ID, s.State, s.CompletedAt)
	case (s.State == ledgertype.Failed || s.State == ledgertype.TimedOut) != (s.Err != nil):
		return fmt.Errorf("%s: %v with error %v", s.ID, s.State, s.Err)
	case s.State == ledgertype.Running && s.StartedAt.IsZero():
		return fmt.Errorf("%s: RUNNING without a start time", s.ID)
	}
	return nil
}
