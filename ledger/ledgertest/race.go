package ledgertest

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/ledger"
)

// testTakeRequestRace races TakeRequest on one job, round after round:
// exactly one caller gets the request, every other ErrRequestTaken.
func testTakeRequestRace(t *testing.T, s Store) {
	const takers = 8
	f := open(t, s, ledger.Config{MaxQueue: 1, MaxCompleted: 16})
	repeat(20, 1000, 200*time.Millisecond, func(round int) bool {
		id := f.submit("a")
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			won   atomic.Int32
		)
		for range takers {
			wg.Go(func() {
				<-start
				req, err := f.l.TakeRequest(f.ctx, id)
				switch {
				case err == nil:
					won.Add(1)
					if req != payload("a") {
						t.Errorf("round %d: took %q", round, req)
					}
				case !errors.Is(err, ledger.ErrRequestTaken):
					t.Errorf("round %d: TakeRequest: %v", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		require.EqualValues(t, 1, won.Load(), "round %d: takers that got the request", round)
		f.must(f.l.Fail(f.ctx, id, errBoom))
		return true
	})
}

// tickClock moves one second on every read, so the order of reads is the
// order of the times they return.
type tickClock struct{ n atomic.Int64 }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *tickClock) Now() time.Time { return epoch.Add(time.Duration(c.n.Add(1)) * time.Second) }

// testTimestampsOrdered races Start against the terminal calls on many
// jobs with a clock that moves on every read: no job's timestamps come
// out of order (CreatedAt <= StartedAt <= CompletedAt), which they do when
// a transition reads the clock outside the job's critical section.
func testTimestampsOrdered(t *testing.T, s Store) {
	const jobs = 256
	clock := &tickClock{}
	f := open(t, s, ledger.Config{MaxQueue: jobs, JobTTL: -1, MaxCompleted: -1, Now: clock.Now})
	all := make([]string, jobs)
	for i := range all {
		all[i] = f.submit("t")
	}
	var wg sync.WaitGroup
	for w := range max(runtime.GOMAXPROCS(0), 2) {
		wg.Go(func() {
			for i, id := range all {
				switch (i + w) % 3 {
				case 0:
					_, _ = f.l.Start(f.ctx, id)
				case 1:
					_, _ = f.l.Fail(f.ctx, id, errBoom)
				default:
					_, _ = f.l.Start(f.ctx, id)
					_, _ = f.l.Finish(f.ctx, id, "r")
				}
			}
		})
	}
	wg.Wait()
	for _, id := range all {
		snap := f.snapshot(id)
		require.NoError(t, stress.Possible(snap))
		require.True(t, snap.State.Terminal(), "%s: every job was ended", id)
	}
}

// testSnapshotsWhole races a poller against the end of a fresh job, round
// after round: every snapshot it reads is whole, never a terminal state
// without its completion time and error.
func testSnapshotsWhole(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1, MaxCompleted: 1})
	repeat(20, 300, 200*time.Millisecond, func(round int) bool {
		id := f.submit("a")
		polling := make(chan struct{})
		bad := make(chan error, 1)
		go func() {
			defer close(bad)
			for i := 0; ; i++ {
				snap, err := f.l.Snapshot(f.ctx, id)
				if i == 0 {
					close(polling)
				}
				if err == nil {
					err = stress.Possible(snap)
				}
				if err != nil {
					bad <- err
					return
				}
				if snap.State.Terminal() {
					return
				}
			}
		}()
		<-polling
		_, err := f.l.Timeout(f.ctx, id, errBoom)
		require.NoError(t, err, "round %d", round)
		require.NoError(t, <-bad, "round %d: the poller saw half a transition", round)
		return true
	})
}
