package postgres_test

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// execSQL runs sql on the database dsn names.
func execSQL(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	require.NoError(t, err)
}

// TestOpenRefusesNewerSchema: a database migrated by a newer program is
// refused, not touched.
func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	execSQL(t, dsn, `UPDATE jobledger_schema SET version = version + 1`)
	_, err = postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.ErrorIs(t, err, postgres.ErrNewerSchema)
}

// TestOpenRefusesForeign: a database with a jobs table of another program
// is refused.
func TestOpenRefusesForeign(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	execSQL(t, dsn, `CREATE TABLE jobs (x int)`)
	_, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.ErrorIs(t, err, postgres.ErrForeign)
}

// TestOpenRefusesDepthMismatch: a stored depth that disagrees with the
// jobs is refused.
func TestOpenRefusesDepthMismatch(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	execSQL(t, dsn, `UPDATE ledger SET depth = 3`)
	_, err = postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.ErrorIs(t, err, postgres.ErrDepthMismatch)
}

// TestOpenUnreachable: a server that is not there is ErrUnreachable.
func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:1/x?connect_timeout=2", ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.ErrorIs(t, err, postgres.ErrUnreachable)
}

// TestOpenTogether: Stores opening on a fresh database at once migrate it
// once (the advisory lock) and all open.
func TestOpenTogether(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var version, schemaRows, ledgerRows int
	require.NoError(t, conn.QueryRow(ctx, `SELECT max(version), count(*) FROM jobledger_schema`).Scan(&version, &schemaRows))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM ledger`).Scan(&ledgerRows))
	require.Equal(t, postgres.SchemaVersion(), version, "migrated to the last version")
	require.Equal(t, 1, schemaRows, "one schema row")
	require.Equal(t, 1, ledgerRows, "the ledger row inserted once")
}
