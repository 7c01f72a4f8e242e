package jobtable_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
)

type waitResult struct {
	snap jobtable.Snapshot
	err  error
}

// waitAsync starts a Wait and returns the channel its result arrives on. The
// test reads it before returning, so the goroutine never outlives it.
func waitAsync(ctx context.Context, tab *table, id string) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		snap, err := tab.Wait(ctx, id)
		out <- waitResult{snap, err}
	}()
	return out
}

func TestWaitWakesOnEveryTerminalKind(t *testing.T) {
	kinds := map[jobtable.State]func(*table, string) error{
		jobtable.Done:     func(tab *table, id string) error { return errOf(tab.Finish(id, "r")) },
		jobtable.Failed:   func(tab *table, id string) error { return errOf(tab.Fail(id, errBoom)) },
		jobtable.TimedOut: func(tab *table, id string) error { return errOf(tab.Timeout(id, errBoom)) },
	}
	for want, end := range kinds {
		t.Run(want.String(), func(t *testing.T) {
			tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
			id := mustSubmit(t, tab, "a")
			require.NoError(t, errOf(tab.Start(id)))
			got := waitAsync(context.Background(), tab, id)
			awaitWaiter(t, tab, id) // the waiter is blocked, not about to look
			require.NoError(t, end(tab, id))
			r := <-got
			require.NoError(t, r.err)
			require.Equal(t, want, r.snap.State)
		})
	}
}

func TestWaitOnTerminalJobReturnsAtOnce(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := toState(t, tab, jobtable.Failed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // even an ended context: the job is terminal
	snap, err := tab.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, jobtable.Failed, snap.State)
	require.ErrorIs(t, snap.Err, errBoom)
}

func TestWaitReturnsOnContextEnd(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := toState(t, tab, jobtable.Running)

	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	snap, err := tab.Wait(expired, id)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, jobtable.Running, snap.State, "the latest snapshot comes back")

	ctx, cancel := context.WithCancel(context.Background())
	got := waitAsync(ctx, tab, id)
	awaitWaiter(t, tab, id)
	cancel()
	r := <-got
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, jobtable.Running, r.snap.State)
	require.Equal(t, 1, tab.Depth(), "an ended wait changes nothing")
}

func TestWaitSurvivesEviction(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 2, JobTTL: -1, MaxCompleted: 1})
	id := mustSubmit(t, tab, "a")
	got := waitAsync(context.Background(), tab, id)
	awaitWaiter(t, tab, id)
	require.NoError(t, errOf(tab.Finish(id, "r")))
	other := mustSubmit(t, tab, "b")
	require.NoError(t, errOf(tab.Finish(other, "r")))
	mustSubmit(t, tab, "trigger") // evicts a
	_, err := tab.Snapshot(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)

	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, jobtable.Done, r.snap.State, "the outcome survives eviction")
	require.Equal(t, "a", r.snap.TaskID)
}

// TestWaitNeverMissesCompletion races Wait against Finish many times, in
// both orders and everything between: each waiter must see DONE. Its context
// never ends on its own, so only the wakeup can release it.
func TestWaitNeverMissesCompletion(t *testing.T) {
	const rounds = 2000
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1, MaxCompleted: 1})
	for round := range rounds {
		id := mustSubmit(t, tab, "a")
		ctx, cancel := context.WithCancel(context.Background())
		got := waitAsync(ctx, tab, id)
		require.NoError(t, errOf(tab.Finish(id, "r")))
		r, err := awaitReturn(t, tab, got)
		cancel()
		if err != nil {
			<-got
			t.Fatalf("round %d, job %s: %v", round, id, err)
		}
		require.NoError(t, r.err)
		require.Equal(t, jobtable.Done, r.snap.State)
	}
}

func TestManyWaitersOneCompletion(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := mustSubmit(t, tab, "a")
	var waiters []<-chan waitResult
	for range 8 {
		waiters = append(waiters, waitAsync(context.Background(), tab, id))
	}
	awaitWaiter(t, tab, id)
	require.NoError(t, errOf(tab.Timeout(id, errBoom)))
	for _, w := range waiters {
		r := <-w
		require.NoError(t, r.err)
		require.Equal(t, jobtable.TimedOut, r.snap.State)
	}
}
