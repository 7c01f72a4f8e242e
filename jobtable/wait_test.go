package jobtable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
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
		ledgertype.Done:     func(tab *table, id string) error { return errOf(tab.Finish(id, "r")) },
		ledgertype.Failed:   func(tab *table, id string) error { return errOf(tab.Fail(id, errBoom)) },
		ledgertype.TimedOut: func(tab *table, id string) error { return errOf(tab.Timeout(id, errBoom)) },
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
	id := toState(t, tab, ledgertype.Failed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // even an ended context: the job is terminal
	snap, err := tab.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.ErrorIs(t, snap.Err, errBoom)
}

func TestWaitReturnsOnContextEnd(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := toState(t, tab, ledgertype.Running)

	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	snap, err := tab.Wait(expired, id)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, ledgertype.Running, snap.State, "the latest snapshot comes back")

	ctx, cancel := context.WithCancel(context.Background())
	got := waitAsync(ctx, tab, id)
	awaitWaiter(t, tab, id)
	cancel()
	r := <-got
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, ledgertype.Running, r.snap.State)
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
	require.Equal(t, ledgertype.Done, r.snap.State, "the outcome survives eviction")
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
		require.Equal(t, ledgertype.Done, r.snap.State)
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
		require.Equal(t, ledgertype.TimedOut, r.snap.State)
	}
}

// TestTerminalReadsTakeNoLock: the terminal transition publishes the job's
// final snapshot before it closes the wakeup channel, so a woken waiter
// reads it without the job's lock, as do Snapshot, Result and Wait on a
// job they find terminal. The test holds the job's lock, as a finisher
// still in its critical section would, and every one of them must return.
func TestTerminalReadsTakeNoLock(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := mustSubmit(t, tab, "a")
	woken := waitAsync(context.Background(), tab, id)
	awaitWaiter(t, tab, id)
	require.NoError(t, errOf(tab.Finish(id, "r")))

	release := jobtable.HoldJobLock(tab, id)
	results := make(chan error, 2)
	go func() {
		r := <-woken
		if r.err == nil && r.snap.State != ledgertype.Done {
			r.err = fmt.Errorf("woken waiter: %v", r.snap.State)
		}
		results <- r.err
	}()
	go func() { results <- terminalReads(tab, id) }()
	grace := time.NewTimer(lostWakeupGrace)
	defer grace.Stop()
	for range 2 {
		select {
		case err := <-results:
			require.NoError(t, err)
		case <-grace.C:
			release()
			<-results
			t.Fatalf("a read of a terminal job waited %v for the job's lock", lostWakeupGrace)
		}
	}
	release()
}

// terminalReads reads the DONE job id every way a client can.
func terminalReads(tab *table, id string) error {
	if snap, err := tab.Snapshot(id); err != nil || snap.State != ledgertype.Done {
		return fmt.Errorf("Snapshot: %v, %v", snap.State, err)
	}
	if res, _, err := tab.Result(id); err != nil || res != "r" {
		return fmt.Errorf("Result: %q, %v", res, err)
	}
	if snap, err := tab.Wait(context.Background(), id); err != nil || snap.State != ledgertype.Done {
		return fmt.Errorf("Wait: %v, %v", snap.State, err)
	}
	return nil
}
