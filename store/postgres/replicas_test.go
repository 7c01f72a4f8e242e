package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// Two Stores on one database play two replicas in one process.

// openStore opens a Store on dsn, closed when t ends.
func openStore(t *testing.T, dsn string, cfg ledger.Config) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.CheckInvariants())
		require.NoError(t, s.Close())
	})
	return s
}

// TestAdmissionAcrossStores: Submits racing on two Stores of one database
// admit exactly MaxQueue jobs in all, never more.
func TestAdmissionAcrossStores(t *testing.T) {
	t.Parallel()
	const maxQueue, callers = 10, 16
	dsn := newDatabase(t)
	stores := []*postgres.Store{
		openStore(t, dsn, ledger.Config{MaxQueue: maxQueue}),
		openStore(t, dsn, ledger.Config{MaxQueue: maxQueue}),
	}
	for round := range 5 {
		var admitted, full atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 * callers {
			wg.Go(func() {
				<-start
				for range 2 {
					_, _, err := stores[i%2].Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("r"))
					switch {
					case err == nil:
						admitted.Add(1)
					case errors.Is(err, ledger.ErrQueueFull):
						full.Add(1)
					default:
						t.Error(err)
					}
				}
			})
		}
		close(start)
		wg.Wait()
		require.Equal(t, int64(maxQueue), admitted.Load(), "round %d: admitted", round)
		require.Equal(t, int64(4*callers-maxQueue), full.Load(), "round %d: refused", round)
		require.Equal(t, maxQueue, stores[1].Stats().Depth)
		require.NoError(t, stores[0].CheckInvariants())
		// Free every slot, from either store, for the next round.
		for i, snap := range mustRecoveredOrLive(t, dsn) {
			_, err := stores[i%2].Fail(ctx, snap, errors.New("next round"))
			require.NoError(t, err)
		}
		require.Equal(t, 0, stores[0].Stats().Depth)
	}
}

// mustRecoveredOrLive lists the ids of the jobs not terminal, through a
// third Store's Recovered (opening it fails no PENDING job).
func mustRecoveredOrLive(t *testing.T, dsn string) []string {
	t.Helper()
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.NoError(t, err)
	defer s.Close()
	rec, err := s.Recovered(ctx)
	require.NoError(t, err)
	var ids []string
	for _, snap := range rec {
		ids = append(ids, snap.ID)
	}
	return ids
}

// TestWaitWokenByOtherStore: a Wait on store A returns when store B ends
// the job, woken by the notification, for each way a job ends.
func TestWaitWokenByOtherStore(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	b := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	for _, end := range []func(id string) (ledger.Snapshot, error){
		func(id string) (ledger.Snapshot, error) { return b.Finish(ctx, id, []byte("res")) },
		func(id string) (ledger.Snapshot, error) { return b.Fail(ctx, id, errors.New("boom")) },
		func(id string) (ledger.Snapshot, error) { return b.Timeout(ctx, id, errors.New("late")) },
	} {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
		require.NoError(t, err)
		got := waitAsync(a, id)
		requireBlocked(t, a, got)
		want, err := end(id)
		require.NoError(t, err)
		r := receive(t, got)
		require.NoError(t, r.err)
		require.Equal(t, want, r.snap, "the waiter gets the final snapshot")
	}
}

// TestWaitAfterListenerReconnect: an end committed while the waiter's
// listener is disconnected, whose notification is therefore lost, is seen
// once the listener reconnects (every waiter re-reads). The reconnect is
// held back until the end has committed, so the notification is surely
// lost.
func TestWaitAfterListenerReconnect(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	lost := make(chan struct{}, 1)    // the listener found its connection gone
	release := make(chan struct{}, 1) // let it reconnect
	a, err := postgres.OpenWithReconnectHook(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{}, func() {
		select {
		case lost <- struct{}{}:
		default:
		}
		<-release
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		close(release)
		require.NoError(t, a.CheckInvariants())
		require.NoError(t, a.Close())
	})
	b := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	for round := range 3 {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
		require.NoError(t, err)
		got := waitAsync(a, id)
		requireBlocked(t, a, got)
		require.NoError(t, b.DropListener(ctx)) // both stores' listeners
		select {
		case <-lost:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the listener did not notice its connection end", round)
		}
		_, err = b.Finish(ctx, id, []byte("res"))
		require.NoError(t, err)
		select {
		case r := <-got:
			t.Fatalf("round %d: woken while the listener was away: %+v", round, r)
		case <-time.After(50 * time.Millisecond):
		}
		release <- struct{}{}
		r := receive(t, got)
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.Done, r.snap.State, "round %d", round)
	}
}

// TestWaitDeadlineReReads: a Wait whose context ends returns the job as
// the database has it then, not the snapshot it first read: Start, which
// notifies nobody, moves the job on while the Wait blocks.
func TestWaitDeadlineReReads(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	b := openStore(t, dsn, ledger.Config{MaxQueue: 8})
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan waitResult, 1)
	go func() {
		snap, err := a.Wait(wctx, id)
		got <- waitResult{snap, err}
	}()
	requireBlocked(t, a, got)
	_, err = b.Start(ctx, id)
	require.NoError(t, err)
	cancel()
	r := receive(t, got)
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, ledgertype.Running, r.snap.State, "read at the deadline, not at the start of the Wait")
}

// TestTakeRequestAcrossStores: of takes racing on two Stores, exactly one
// gets the request.
func TestTakeRequestAcrossStores(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	stores := []*postgres.Store{
		openStore(t, dsn, ledger.Config{MaxQueue: 8}),
		openStore(t, dsn, ledger.Config{MaxQueue: 8}),
	}
	for range 10 {
		id, _, err := stores[0].Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
		require.NoError(t, err)
		var got, taken atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := stores[i%2].TakeRequest(ctx, id)
				switch {
				case err == nil:
					got.Add(1)
				case errors.Is(err, ledger.ErrRequestTaken):
					taken.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, [2]int64{1, 7}, [2]int64{got.Load(), taken.Load()})
		_, err = stores[1].Finish(ctx, id, nil)
		require.NoError(t, err)
	}
}

type waitResult struct {
	snap ledger.Snapshot
	err  error
}

func waitAsync(s *postgres.Store, id string) <-chan waitResult {
	got := make(chan waitResult, 1)
	go func() {
		snap, err := s.Wait(ctx, id)
		got <- waitResult{snap, err}
	}()
	return got
}

// requireBlocked waits until s has a Wait registered and checks that it
// has not returned.
func requireBlocked(t *testing.T, s *postgres.Store, got <-chan waitResult) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Waiting() > 0 }, 5*time.Second, time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("Wait returned on a live job: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
}

func receive(t *testing.T, got <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Wait missed the end")
		return waitResult{}
	}
}
