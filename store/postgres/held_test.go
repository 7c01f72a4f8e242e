package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestRunnerGoneLosesTheLease: a job of this replica that nobody here runs
// is not renewed, and the reaper ends it when its lease lapses, even the
// reaper of its own replica (here the only one): one whose Claim committed
// but whose reply was lost (the row as that Claim leaves it, written by
// hand: the caller never learnt the id), and one whose ends all failed
// (the commit fails: poisonCommits). The job this Store's caller holds is
// renewed and not reaped. Regression: the keeper renewed every live job
// its replica owned, and the reaper skipped them all, so such a job held
// its queue slot, and hung its Waits, for as long as the replica lived.
func TestRunnerGoneLosesTheLease(t *testing.T) {
	t.Parallel()
	const lease = time.Hour // the keeper never ticks in the test
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, lease)
	execSQL(t, dsn, poisonCommits)
	submit := func() string {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
		require.NoError(t, err)
		return id
	}
	lost, failing, held, canceled := submit(), submit(), submit(), submit()

	execSQL(t, dsn, fmt.Sprintf(`UPDATE jobs SET state = 1, taken = true, request = NULL, started_at = created_at,
		owner = 'a', lease_until = created_at + %d WHERE id = '%s'`, lease.Nanoseconds(), lost))
	_, err := a.Start(ctx, failing)
	require.NoError(t, err)
	_, err = a.Fail(ctx, failing, errors.New("poison"))
	require.Error(t, err, "the end fails")
	_, err = a.Fail(ctx, failing, errors.New("poison"))
	require.Error(t, err, "and so does the fallback")
	_, err = a.Start(ctx, held)
	require.NoError(t, err)
	_, err = a.Start(ctx, canceled)
	require.NoError(t, err)
	_, err = a.Fail(ctx, canceled, errors.New("poison"))
	require.Error(t, err, "a cancel's end fails, its runner running on")

	for range 4 { // past every first lease
		clock.Advance(lease / 3)
		require.NoError(t, a.Renew(ctx))
	}
	n, err := a.Reap(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the two jobs nobody runs")
	for id, want := range map[string]ledger.State{lost: ledgertype.Failed, failing: ledgertype.Failed, held: ledgertype.Running, canceled: ledgertype.Running} {
		snap, err := a.Snapshot(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, snap.State, "job %s", id)
		if want == ledgertype.Failed {
			require.EqualError(t, snap.Err, postgres.WorkerLost)
		}
	}
	require.Equal(t, 2, a.Stats().Depth, "their slots are free")
	_, err = a.Finish(ctx, held, []byte("res"))
	require.NoError(t, err, "the held job ends as usual")
	_, err = a.Finish(ctx, canceled, []byte("res"))
	require.NoError(t, err, "so does the one whose one end failed: its runner still holds it")
}
