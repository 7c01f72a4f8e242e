package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// lockJob runs sql (one statement that locks job rows: an UPDATE, or a
// SELECT ... FOR UPDATE) in a transaction of a connection of its own,
// and leaves it open until the returned function commits it (at the
// latest when t ends), as a replica's write in flight would.
func lockJob(t *testing.T, dsn, sql string, args ...any) (commit func()) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, sql, args...)
	require.NoError(t, err)
	var once sync.Once
	commit = func() {
		once.Do(func() {
			require.NoError(t, tx.Commit(ctx))
			require.NoError(t, conn.Close(ctx))
		})
	}
	t.Cleanup(commit)
	return commit
}

// TestClaimPassesOverLockedJob: a Claim passes over a job whose row
// another replica's write holds, and claims the next one at once.
// Regression: a claim without SKIP LOCKED queues behind the other write
// (and, once it commits, may find nothing: the row it waited for no longer
// matches, and LIMIT gives no other).
func TestClaimPassesOverLockedJob(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s := openStore(t, dsn, ledger.Config{MaxQueue: 4})
	first, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("a"))
	require.NoError(t, err)
	second, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("b"))
	require.NoError(t, err)
	lockJob(t, dsn, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, first)

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snap, req, err := s.Claim(cctx)
	require.NoError(t, err, "the claim waited for a locked row")
	require.Equal(t, second, snap.ID)
	require.Equal(t, []byte("b"), req)
}

// TestReaperSparesRenewalInFlight: a renewal that commits while the
// reaper waits for its job's row saves the job: the reaper locks its
// candidates and compares their leases as the renewal committed them.
// Regression: a reaper that read its candidates without locking them, and
// ended each without looking at its lease again, ends a job whose lease
// was renewed meanwhile, under a live replica.
func TestReaperSparesRenewalInFlight(t *testing.T) {
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
	clock.Advance(lease + time.Second) // lapsed, and a's renewal is in flight:
	done := make(chan struct{})
	t.Cleanup(func() { <-done }) // after the renewal's commit, on every path
	renewed := lockJob(t, dsn, `UPDATE jobs SET lease_until = $2 WHERE id = $1`,
		id, clock.Now().Add(lease).UnixNano())

	reaped := make(chan int, 1)
	go func() {
		defer close(done)
		n, err := b.Reap(ctx)
		if err != nil {
			t.Error(err)
		}
		reaped <- n
	}()
	awaitLockWaiter(t, dsn)
	renewed()
	select {
	case n := <-reaped:
		require.Zero(t, n, "the reaper ended a job whose lease was renewed")
	case <-time.After(30 * time.Second):
		t.Fatal("the reaper never returned")
	}
	snap, err := a.Snapshot(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Running, snap.State)
}
