package postgres_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestOpenWhileAnotherReplicaEnds pins a bug of Open's depth check: it
// read the depth with FOR UPDATE and counted the live jobs in a subquery of
// the same statement. Under READ COMMITTED, a statement that waits for the
// ledger row's lock re-reads the row at its latest commit, but its
// subquery keeps the snapshot taken when the statement began; so a replica
// restarting while another ended a job saw the new depth beside the old
// count and refused to start (ErrDepthMismatch), as the multi-replica check
// found. Here the end (replica a's Fail) and the Open (replica b) both
// queue behind a transaction holding the ledger row, the end first.
func TestOpenWhileAnotherReplicaEnds(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openReplica(t, dsn, "a", newFakeClock(), time.Hour)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)

	holder, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT depth FROM ledger WHERE id = 1 FOR UPDATE`)
	require.NoError(t, err)

	// The counts come from another connection: inside a transaction,
	// pg_stat_activity keeps the values it read first.
	watcher, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer watcher.Close(ctx)

	failed := make(chan error, 1)
	go func() {
		_, err := a.Fail(ctx, id, ledger.ErrNotFound)
		failed <- err
	}()
	waitLockWaiters(t, watcher, 1) // the end queues first
	open := openReplicaAsync(ctx, dsn, "b")
	waitLockWaiters(t, watcher, 2)
	require.NoError(t, tx.Commit(ctx))

	require.NoError(t, <-failed)
	b := <-open
	require.NoError(t, b.err, "b opens beside a's end")
	require.NoError(t, b.s.CheckInvariants())
	require.NoError(t, b.s.Close())
}

// opened is what an Open in a goroutine of its own returned.
type opened struct {
	s   *postgres.Store
	err error
}

// openReplicaAsync opens the store of dsn as replica name (MaxQueue 4) in
// a goroutine of its own, and returns where its result comes: for a test
// that shows Open waiting on a lock another connection holds.
func openReplicaAsync(ctx context.Context, dsn, name string) <-chan opened {
	open := make(chan opened, 1)
	go func() {
		s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 4}, postgres.Options{Replica: name})
		open <- opened{s, err}
	}()
	return open
}

// waitLockWaiters spins until n other backends of the database wait for a
// lock. The bound only stops a broken test from hanging.
func waitLockWaiters(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	for range 100_000 {
		var waiting int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		if waiting >= n {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("never %d backends waiting for a lock", n)
}
