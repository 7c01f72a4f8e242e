package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestOpenMigratesBesideAnEnd: an Open with a migration pending, during an
// upgrade beside live replicas, waits for an end in flight instead of
// deadlocking with it. An end locks the ledger row, then writes the job's
// row. Regression: Open ran the migration's DDL (CREATE INDEX ON jobs, a
// SHARE lock on jobs) before it locked the ledger row, the reverse order,
// so an end that held the ledger row and then wrote jobs waited for Open,
// which waited for the ledger row: PostgreSQL broke the deadlock by
// failing one of them (SQLSTATE 40P01).
func TestOpenMigratesBesideAnEnd(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 4}, postgres.Options{Replica: "a"})
	require.NoError(t, err)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, nil)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	// The database as the previous schema left it: the last migration
	// (a column and indexes on jobs) pending.
	execSQL(t, dsn, `DROP INDEX jobs_tenant_live; DROP INDEX jobs_tenant_admission; DROP INDEX jobs_idem_key;
		ALTER TABLE jobs DROP COLUMN tenant;
		CREATE UNIQUE INDEX jobs_idem_key ON jobs (idem_key) WHERE idem_key IS NOT NULL;
		UPDATE jobledger_schema SET version = version - 1`)

	// An end in flight, as write.go's: the ledger row locked first.
	end, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer end.Close(ctx)
	tx, err := end.Begin(ctx)
	require.NoError(t, err)
	var seq int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT next_seq FROM ledger WHERE id = 1 FOR UPDATE`).Scan(&seq))

	watcher, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer watcher.Close(ctx)
	open := openReplicaAsync(ctx, dsn, "b")
	waitLockWaiters(t, watcher, 1) // Open waits for the ledger row

	// The end writes the job's row, then the ledger's, and commits.
	_, err = tx.Exec(ctx, `UPDATE jobs SET state = 3, error = 'x', seq = $1, completed_at = created_at,
		request = NULL WHERE id = $2`, seq, id)
	require.NoError(t, err, "the end's write to jobs")
	_, err = tx.Exec(ctx, `UPDATE ledger SET depth = depth - 1, next_seq = next_seq + 1 WHERE id = 1`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx), "the end commits")

	b := <-open
	require.NoError(t, b.err, "Open migrates once the end committed")
	defer b.s.Close()
	snap, err := b.s.Snapshot(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.NoError(t, b.s.CheckInvariants())
	var version int
	require.NoError(t, watcher.QueryRow(ctx, `SELECT version FROM jobledger_schema`).Scan(&version))
	require.Equal(t, postgres.SchemaVersion(), version)
}
