package jobtable_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The read-heavy mix: the seed's stress shape, 4 submitters, 2 runners, 3
// pollers and 2 waiters on one ledger. One round submits mixJobs jobs and
// runs each to DONE, while each poller reads mixPolls times (Snapshot,
// State and Result of a recent job, three reads) and each waiter waits
// mixWaits times on a recent job: 18,432 reads and 128 waits against 256
// lifecycles a round.
const (
	mixSubmitters, mixRunners, mixPollers, mixWaiters = 4, 2, 3, 2

	mixJobs  = 256  // per round, mixJobs/mixSubmitters per submitter
	mixPolls = 2048 // per poller per round
	mixWaits = 64   // per waiter per round
)

// readMix drives rounds of the mix on one ledger. recent holds the ids of
// the last mixJobs jobs submitted, so that pollers and waiters read jobs
// still running as well as jobs already done.
type readMix struct {
	l      mixLedger
	recent [mixJobs]atomic.Pointer[string]
	round  uint64
}

// newReadMix fills recent with the ids of mixJobs jobs run to DONE.
func newReadMix(l mixLedger) (*readMix, error) {
	m := &readMix{l: l}
	for i := range m.recent {
		id, err := l.Submit("task", req{payload: "p"})
		if err != nil {
			return nil, err
		}
		if _, err := l.Finish(id, "r"); err != nil {
			return nil, err
		}
		m.recent[i].Store(&id)
	}
	return m, nil
}

// run runs one round and returns the first error of any of its goroutines.
func (m *readMix) run() error {
	m.round++
	var (
		wg     sync.WaitGroup
		once   sync.Once
		first  error
		queue  = make(chan string, mixJobs)
		fed    sync.WaitGroup
		errorf = func(err error) { once.Do(func() { first = err }) }
	)
	rng := func(role, i int) *rand.Rand { return rand.New(rand.NewPCG(m.round, uint64(role<<8|i))) }
	for s := range mixSubmitters {
		fed.Add(1)
		wg.Go(func() {
			defer fed.Done()
			for k := range mixJobs / mixSubmitters {
				id, err := m.l.Submit("task", req{payload: "p"})
				if err != nil {
					errorf(err)
					return
				}
				m.recent[s*(mixJobs/mixSubmitters)+k].Store(&id)
				queue <- id
			}
		})
	}
	go func() { fed.Wait(); close(queue) }()
	for range mixRunners {
		wg.Go(func() {
			for id := range queue {
				if _, err := m.l.TakeRequest(id); err != nil {
					errorf(err)
				}
				if _, err := m.l.Start(id); err != nil {
					errorf(err)
				}
				if _, err := m.l.Finish(id, "r"); err != nil {
					errorf(err)
				}
			}
		})
	}
	for p := range mixPollers {
		wg.Go(func() {
			r := rng(1, p)
			for range mixPolls {
				id := *m.recent[r.IntN(mixJobs)].Load()
				if _, err := m.l.Snapshot(id); err != nil {
					errorf(err)
				}
				if _, err := m.l.State(id); err != nil {
					errorf(err)
				}
				if _, _, err := m.l.Result(id); err != nil && !errors.Is(err, jobtable.ErrNotDone) {
					errorf(err)
				}
			}
		})
	}
	for w := range mixWaiters {
		wg.Go(func() {
			r := rng(2, w)
			for range mixWaits {
				id := *m.recent[r.IntN(mixJobs)].Load()
				snap, err := m.l.Wait(context.Background(), id)
				if err == nil && snap.State != ledgertype.Done {
					err = errors.New("Wait returned before the job was done")
				}
				if err != nil {
					errorf(err)
				}
			}
		})
	}
	wg.Wait()
	return first
}

// BenchmarkReadMix compares the table with the global-mutex baseline on
// the read-heavy mix. One op is one round (256 jobs, 18,432 reads and 128
// waits, from 11 goroutines whatever GOMAXPROCS is); the two alternate,
// four rounds at a time, and "ratio" is baseline time / table time.
func BenchmarkReadMix(b *testing.B) {
	tab, err := jobtable.New[req, string](benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	subject, err := newReadMix(tab)
	if err != nil {
		b.Fatal(err)
	}
	baseline, err := newReadMix(newGlobalLedger(benchConfig()))
	if err != nil {
		b.Fatal(err)
	}
	benchcmp.Alternate(b, 4, subject.run, baseline.run)
}
