package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

type waitResult struct {
	snap ledger.Snapshot
	err  error
}

// waitAsync starts a Wait and returns the channel its result arrives on.
// Every rule receives from it before it returns, so no waiter outlives
// its test.
func (f *fixture) waitAsync(ctx context.Context, id string) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		snap, err := f.l.Wait(ctx, id)
		out <- waitResult{snap, err}
	}()
	return out
}

// receive returns what a waiter reported, failing t if it does not
// report within lostWakeupGrace of its job's end.
func receive(t *testing.T, got <-chan waitResult, cancel context.CancelFunc) waitResult {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(lostWakeupGrace):
		cancel()
		r := <-got
		t.Fatalf("a waiter was still blocked %v after its job ended (lost wakeup); cancelled, it returned %v", lostWakeupGrace, r.err)
		return r
	}
}

// testWaitTerminal: Wait on a terminal job returns its snapshot at once,
// even with a context that has ended.
func testWaitTerminal(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id := f.toState(ledgertype.Failed)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snap, err := f.l.Wait(ctx, id)
	require.NoError(t, err)
	requireSame(t, f.snapshot(id), snap)
}

// testWaitWakes: a waiter blocked on a live job returns when the job ends,
// whichever way, with its terminal snapshot.
func testWaitWakes(t *testing.T, s Store) {
	for _, end := range ops[1:] {
		t.Run(end.name, func(t *testing.T) {
			f := open(t, s, ledger.Config{MaxQueue: 1})
			id := f.toState(ledgertype.Running)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := f.waitAsync(ctx, id)
			notReturned(t, got, "Wait")
			ended, err := end.do(f, id)
			require.NoError(t, err)
			r := receive(t, got, cancel)
			require.NoError(t, r.err)
			requireSame(t, ended, r.snap, "the waiter gets the terminal snapshot")
		})
	}
}

// testWaitContextEnd: when the context ends first, Wait returns its error
// with the job's latest snapshot, and changes nothing.
func testWaitContextEnd(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id := f.toState(ledgertype.Running)

	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	snap, err := f.l.Wait(expired, id)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	requireSame(t, f.snapshot(id), snap, "the latest snapshot comes back")

	ctx, cancel := context.WithCancel(context.Background())
	got := f.waitAsync(ctx, id)
	notReturned(t, got, "Wait")
	cancel()
	r := receive(t, got, cancel)
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, ledgertype.Running, r.snap.State)
	require.Equal(t, 1, f.depth(), "an ended wait changes nothing")
}

// testManyWaiters: one end wakes every waiter of the job.
func testManyWaiters(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id := f.submit("a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waiters []<-chan waitResult
	for range 8 {
		waiters = append(waiters, f.waitAsync(ctx, id))
	}
	notReturned(t, waiters[0], "Wait")
	f.must(f.l.Timeout(f.ctx, id, errBoom))
	for _, w := range waiters {
		r := receive(t, w, cancel)
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.TimedOut, r.snap.State)
	}
}

// testWaitSurvivesEviction: a waiter woken by its job's end returns the
// final snapshot even if the job is evicted before the waiter runs again
// (the HTTP wait relies on it).
func testWaitSurvivesEviction(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2, JobTTL: -1, MaxCompleted: 1})
	id := f.submit("a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := f.waitAsync(ctx, id)
	notReturned(t, got, "Wait")
	f.must(f.l.Finish(f.ctx, id, "r"))
	f.toState(ledgertype.Done) // the bound is now exceeded
	f.submit("trigger")        // and a is evicted
	require.False(t, f.held(id))

	r := receive(t, got, cancel)
	require.NoError(t, r.err)
	require.Equal(t, ledgertype.Done, r.snap.State, "the outcome survives eviction")
	require.Equal(t, "a", r.snap.TaskID)
}

// testWaitNeverMisses races Wait against the job's end, round after
// round, in both orders and everything between: each waiter sees the
// end. Its context never ends on its own, so only the wakeup can release
// it.
func testWaitNeverMisses(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1, MaxCompleted: 1})
	rounds := repeat(50, 2000, 200*time.Millisecond, func(round int) bool {
		id := f.submit("a")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := f.waitAsync(ctx, id)
		f.must(f.l.Finish(f.ctx, id, "r"))
		r := receive(t, got, cancel)
		require.NoError(t, r.err, "round %d", round)
		require.Equal(t, ledgertype.Done, r.snap.State, "round %d", round)
		return true
	})
	t.Logf("%d rounds", rounds)
}
