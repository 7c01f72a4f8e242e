package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestRestartEndsOnlyItsOwnJobs: a replica opening again under its name
// fails the jobs its earlier life was running (InterruptedByRestart) and
// releases the requests it had taken, and leaves another replica's
// running and taken jobs as they are: their leases protect them.
func TestRestartEndsOnlyItsOwnJobs(t *testing.T) {
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
	aRuns, aTook, bRuns, bTook, nobody := submit(), submit(), submit(), submit(), submit()
	_, err := a.Start(ctx, aRuns)
	require.NoError(t, err)
	_, err = a.TakeRequest(ctx, aTook)
	require.NoError(t, err)
	_, err = b.Start(ctx, bRuns)
	require.NoError(t, err)
	_, err = b.TakeRequest(ctx, bTook)
	require.NoError(t, err)

	again := openReplica(t, dsn, "a", clock, lease) // a's next life
	for id, want := range map[string]ledger.State{aRuns: ledgertype.Failed, aTook: ledgertype.Pending,
		bRuns: ledgertype.Running, bTook: ledgertype.Pending, nobody: ledgertype.Pending} {
		snap, err := again.Snapshot(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, snap.State, "job %s", id)
	}
	snap, err := again.Snapshot(ctx, aRuns)
	require.NoError(t, err)
	require.EqualError(t, snap.Err, postgres.InterruptedByRestart)
	rec, err := again.Recovered(ctx)
	require.NoError(t, err)
	var ids []string
	for _, s := range rec {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []string{aTook, nobody}, ids, "b's taken job is b's to run")

	_, err = again.TakeRequest(ctx, aTook)
	require.NoError(t, err, "a's mark was released")
	_, err = again.TakeRequest(ctx, bTook)
	require.ErrorIs(t, err, ledger.ErrRequestTaken, "b's mark stays")
	_, err = b.Finish(ctx, bRuns, []byte("res"))
	require.NoError(t, err, "b's running job was left to b")
	_, err = a.Finish(ctx, aRuns, []byte("late"))
	require.ErrorIs(t, err, ledger.ErrTerminal)
	for _, id := range []string{aTook, bTook, nobody} {
		_, err = b.Finish(ctx, id, nil)
		require.NoError(t, err)
	}
}
