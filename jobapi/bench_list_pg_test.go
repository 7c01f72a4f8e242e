package jobapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// openSeededPostgres opens the PostgreSQL store on a new database that
// holds n finished jobs, as fillFinished leaves them (task "bench", FAILED
// "done"), written in one statement: through the store, one admission and
// one end each, filling 100,000 takes minutes. The store is opened once
// to lay out its schema, and again after the rows are in, so that the
// second Open checks the depth and the completion sequence against them
// (and the store's invariants are checked when the benchmark closes it).
func openSeededPostgres(b *testing.B, cfg ledger.Config, n int) ledger.Ledger[jobapi.Request, json.RawMessage] {
	b.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	st, err := postgres.Open(ctx, dsn, cfg, postgres.Options{})
	require.NoError(b, err)
	require.NoError(b, st.Close())

	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(b, err)
	defer conn.Close(ctx)
	// Ids of 26 letters, as the store's own are 26 characters of base32;
	// admission, start and end one nanosecond apart per job, in order.
	_, err = conn.Exec(ctx, `INSERT INTO jobs (id, task_id, state, error, created_at, started_at, completed_at, seq, owner)
		SELECT translate(lpad(g::text, 26, '0'), '0123456789', 'ABCDEFGHIJ'), 'bench', 3, 'done',
			1e18::bigint + 3*g, 1e18::bigint + 3*g + 1, 1e18::bigint + 3*g + 2, g, 'solo'
		FROM generate_series(1, $1::bigint) AS g`, n)
	require.NoError(b, err)
	_, err = conn.Exec(ctx, `UPDATE ledger SET next_seq = $1 WHERE id = 1`, n+1)
	require.NoError(b, err)
	_, err = conn.Exec(ctx, `ANALYZE jobs`)
	require.NoError(b, err)

	st, err = postgres.Open(ctx, dsn, cfg, postgres.Options{})
	require.NoError(b, err)
	return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{})
}
