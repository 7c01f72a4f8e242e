package jobtable_test

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// tickClock is a clock that moves one second on every read, so the order of
// reads is the order of the times they return. A read can be intercepted
// once by a hook, which runs on the reading goroutine.
type tickClock struct {
	n    atomic.Int64
	hook atomic.Pointer[func() time.Time]
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tick is one read of the clock, bypassing the hook.
func (c *tickClock) tick() time.Time { return epoch.Add(time.Duration(c.n.Add(1)) * time.Second) }

func (c *tickClock) Now() time.Time {
	if h := c.hook.Swap(nil); h != nil {
		return (*h)()
	}
	return c.tick()
}

// intercept makes the next read run h instead.
func (c *tickClock) intercept(h func() time.Time) { c.hook.Store(&h) }

// TestCompletedNotBeforeStarted pins completed_at < started_at: Start read
// the clock before taking the job's lock and the terminal transition read it
// before taking the job's lock too, so a Finish could read the clock first,
// a Start read it and take the job's lock, and the Finish then complete the
// RUNNING job with the earlier time.
//
// The test drives exactly that interleaving. Start's clock read starts a
// Finish and lets it go as far as it can: into its own clock read when that
// read is outside the job's lock (the old code: the Finish reads the clock,
// then waits for Start to return before taking the job's lock), or up to
// the locks when Start holds the job's lock while reading (the fix: the
// Finish waits on the job's lock, so its read follows Start's).
func TestCompletedNotBeforeStarted(t *testing.T) {
	clock := &tickClock{}
	tab, err := jobtable.New[req, string](jobtable.Config{MaxQueue: 1, Now: clock.Now, NewID: func() string { return "j1" }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tab.CheckInvariants()) })
	id, err := tab.Submit("a", req{})
	require.NoError(t, err)
	probe := jobtable.LockProbe(tab, id)

	type outcome struct {
		snap jobtable.Snapshot
		err  error
	}
	finished := make(chan outcome, 1)
	startReturned := make(chan struct{})
	var finishRead atomic.Bool

	clock.intercept(func() time.Time { // Start's read
		clock.intercept(func() time.Time { // Finish's read
			now := clock.tick()
			finishRead.Store(true)
			<-startReturned // let the Start run between this read and the job's lock
			return now
		})
		go func() {
			snap, err := tab.Finish(id, "r")
			finished <- outcome{snap, err}
		}()
		for !finishRead.Load() {
			if table, job := probe(); table && job {
				break // Finish holds the table's lock and we hold the job's
			}
			runtime.Gosched()
		}
		return clock.tick()
	})
	started, err := tab.Start(id)
	close(startReturned)
	require.NoError(t, err)
	end := <-finished
	require.NoError(t, end.err)

	require.Equal(t, ledgertype.Running, started.State)
	require.Equal(t, ledgertype.Done, end.snap.State)
	require.False(t, end.snap.CompletedAt.Before(end.snap.StartedAt),
		"completed %v before started %v", end.snap.CompletedAt, end.snap.StartedAt)
	require.Equal(t, started.StartedAt, end.snap.StartedAt)
}

// TestHammerTimestampOrder races Start against the terminal calls on many
// jobs with a clock that moves on every read, and checks that no job's
// timestamps come out of order (TimestampOrderInv).
func TestHammerTimestampOrder(t *testing.T) {
	const jobs = 2000
	clock := &tickClock{}
	var ids atomic.Int64
	tab, err := jobtable.New[req, string](jobtable.Config{
		MaxQueue: jobs, JobTTL: -1, MaxCompleted: -1, Now: clock.Now,
		NewID: func() string { return "j" + strconv.FormatInt(ids.Add(1), 10) },
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tab.CheckInvariants()) })

	all := make([]string, jobs)
	for i := range all {
		all[i], err = tab.Submit("t", req{})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	procs := runtime.GOMAXPROCS(0)
	for w := range max(procs, 2) {
		wg.Go(func() {
			for i, id := range all {
				switch (i + w) % 3 {
				case 0:
					_, _ = tab.Start(id)
				case 1:
					_, _ = tab.Fail(id, errBoom)
				default:
					_, _ = tab.Start(id)
					_, _ = tab.Finish(id, "r")
				}
			}
		})
	}
	wg.Wait()
	for _, id := range all {
		snap, err := tab.Snapshot(id)
		require.NoError(t, err)
		require.False(t, snap.CompletedAt.Before(snap.CreatedAt), "%s", id)
		if !snap.StartedAt.IsZero() {
			require.False(t, snap.StartedAt.Before(snap.CreatedAt), "%s", id)
			require.False(t, snap.CompletedAt.Before(snap.StartedAt), "%s", id)
		}
	}
}
