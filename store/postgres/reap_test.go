package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestReaperEndsOnlyLapsedLeases: replica a stalls (its keeper never ticks
// in the test: the leases last an hour, and the clock is the test's). Of
// its jobs, the reaper of replica b ends FAILED, "worker lost", those
// whose lease lapsed, RUNNING or taken, with the decrement and the
// wakeup of an end, and leaves the one whose lease has not lapsed, and
// the PENDING job nobody took. a's late Finish gets ErrTerminal; a never
// reaps its own jobs.
func TestReaperEndsOnlyLapsedLeases(t *testing.T) {
	t.Parallel()
	const lease = time.Hour
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, lease)
	b := openReplica(t, dsn, "b", clock, lease)
	submit := func() string {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
		require.NoError(t, err)
		return id
	}
	running, taken, fresh, untaken := submit(), submit(), submit(), submit()
	_, err := a.Start(ctx, running)
	require.NoError(t, err)
	_, err = a.TakeRequest(ctx, taken)
	require.NoError(t, err)
	clock.Advance(lease / 2)
	_, err = a.Start(ctx, fresh)
	require.NoError(t, err)
	got := waitAsync(b, running)
	requireBlocked(t, b, got)

	clock.Advance(lease / 2) // running's and taken's leases end now: not yet lapsed
	n, err := b.Reap(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a lease that ends now has not lapsed")

	clock.Advance(time.Nanosecond)
	n, err = a.Reap(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a replica does not reap its own jobs")
	n, err = b.Reap(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)

	r := receive(t, got)
	require.NoError(t, r.err)
	require.Equal(t, ledgertype.Failed, r.snap.State)
	require.EqualError(t, r.snap.Err, postgres.WorkerLost)
	for id, want := range map[string]ledger.State{running: ledgertype.Failed, taken: ledgertype.Failed, fresh: ledgertype.Running, untaken: ledgertype.Pending} {
		snap, err := b.Snapshot(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, snap.State, "job %s", id)
		if want == ledgertype.Failed {
			require.EqualError(t, snap.Err, postgres.WorkerLost)
			require.Equal(t, clock.Now(), snap.CompletedAt)
		}
	}
	require.Equal(t, 2, b.Stats().Depth, "the reaped jobs left the queue")

	_, err = a.Finish(ctx, running, []byte("late"))
	require.ErrorIs(t, err, ledger.ErrTerminal, "the dead owner's late Finish")
	_, err = a.Finish(ctx, fresh, []byte("res"))
	require.NoError(t, err, "the live lease's job ends as usual")
	_, err = a.Fail(ctx, untaken, errors.New("done with it"))
	require.NoError(t, err)
	n, err = b.Reap(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestRenewalSavesTheLease: a lease renewed before it lapsed is not
// reaped when its first term would have ended.
func TestRenewalSavesTheLease(t *testing.T) {
	t.Parallel()
	const lease = time.Hour
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, lease)
	b := openReplica(t, dsn, "b", clock, lease)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	_, err = a.Start(ctx, id)
	require.NoError(t, err)
	for range 3 {
		clock.Advance(lease / 3)
		require.NoError(t, a.Renew(ctx))
		n, err := b.Reap(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	_, err = a.Finish(ctx, id, []byte("res"))
	require.NoError(t, err)
}
