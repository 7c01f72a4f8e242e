package sqlite_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

type waitResult struct {
	snap ledger.Snapshot
	err  error
}

// waitAsync starts a Wait and returns the channel its result arrives on. The
// test reads it before returning, so the goroutine never outlives it.
func waitAsync(ctx context.Context, s *sqlite.Store, id string) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		snap, err := s.Wait(ctx, id)
		out <- waitResult{snap, err}
	}()
	return out
}

func TestWaitWakesOnEveryTerminalKind(t *testing.T) {
	for want, end := range map[ledger.State]call{ledgertype.Done: finish, ledgertype.Failed: fail, ledgertype.TimedOut: timeout} {
		t.Run(want.String(), func(t *testing.T) {
			s, _ := newStore(t, ledger.Config{MaxQueue: 1})
			id := toState(t, s, ledgertype.Running)
			got := waitAsync(ctx, s, id)
			sqlite.AwaitWaiter(t, s, id) // the waiter is blocked, not about to look
			ended, err := end(s, id)
			require.NoError(t, err)
			r := <-got
			require.NoError(t, r.err)
			require.Equal(t, ended, r.snap, "the waiter gets the final snapshot")
		})
	}
}

func TestWaitOnTerminalJobReturnsAtOnce(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	id := toState(t, s, ledgertype.Failed)
	ended, cancel := context.WithCancel(ctx)
	cancel() // even an ended context: the job is terminal
	snap, err := s.Wait(ended, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.EqualError(t, snap.Err, errBoom.Error())
}

func TestWaitReturnsOnContextEnd(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	id := toState(t, s, ledgertype.Running)

	expired, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel()
	snap, err := s.Wait(expired, id)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, ledgertype.Running, snap.State, "the latest snapshot comes back")

	c, cancel := context.WithCancel(ctx)
	got := waitAsync(c, s, id)
	sqlite.AwaitWaiter(t, s, id)
	cancel()
	r := <-got
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, ledgertype.Running, r.snap.State)
	require.Equal(t, 1, s.Stats().Depth, "an ended wait changes nothing")
}

// TestWaitersOfOneJob: several waiters share one wakeup; one that gives
// up leaves the others waiting.
func TestWaitersOfOneJob(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	id := toState(t, s, ledgertype.Pending)
	c, cancel := context.WithCancel(ctx)
	quitter := waitAsync(c, s, id)
	var stayers []<-chan waitResult
	for range 3 {
		stayers = append(stayers, waitAsync(ctx, s, id))
	}
	sqlite.AwaitWaiter(t, s, id)
	cancel()
	require.ErrorIs(t, (<-quitter).err, context.Canceled)
	require.NoError(t, errOf(s.Timeout(ctx, id, errBoom)))
	for _, got := range stayers {
		r := <-got
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.TimedOut, r.snap.State)
	}
}

// TestWaitRacesCompletion starts a waiter and the job's end at once, many
// times: whichever comes first, the waiter returns the terminal snapshot
// (a waiter that read the job live and registered after the commit's
// wakeup would block for ever: the read and the registration are in the
// other order for that reason).
func TestWaitRacesCompletion(t *testing.T) {
	const rounds, waiters = 50, 4
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	for round := range rounds {
		id := toState(t, s, ledgertype.Running)
		start := make(chan struct{})
		var wg sync.WaitGroup
		results := make(chan waitResult, waiters)
		for range waiters {
			wg.Go(func() {
				<-start
				snap, err := s.Wait(ctx, id)
				results <- waitResult{snap, err}
			})
		}
		wg.Go(func() {
			<-start
			if _, err := s.Finish(ctx, id, []byte(strconv.Itoa(round))); err != nil {
				t.Errorf("Finish: %v", err)
			}
		})
		close(start)
		wg.Wait()
		close(results)
		for r := range results {
			require.NoError(t, r.err)
			require.Equal(t, ledgertype.Done, r.snap.State, "round %d", round)
		}
		checkInvariants(t, s)
	}
}

// TestWaitReturnsOnClose: after Close no completion can come, so a blocked
// Wait returns ErrClosed at once, with the latest snapshot.
func TestWaitReturnsOnClose(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	id := toState(t, s, ledgertype.Running)
	got := waitAsync(ctx, s, id)
	sqlite.AwaitWaiter(t, s, id)
	require.NoError(t, s.Close())
	r := <-got
	require.ErrorIs(t, r.err, ledger.ErrClosed)
	require.Equal(t, id, r.snap.ID)
}
