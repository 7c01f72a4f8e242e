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
// holds n finished jobs, the rows fillFinished leaves (task "bench",
// admitted and failed "done" without a start: no started_at, no owner),
// written in one statement: through the store, one admission and one end
// each, filling 100,000 takes minutes. The store is opened once to lay out
// its schema, and again after the rows are in, and its invariants are
// checked on them (the completion sequence, the admission ordinals, the
// payloads, the depth).
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
	// admission and end one nanosecond apart per job, in order.
	_, err = conn.Exec(ctx, `INSERT INTO jobs (id, task_id, state, error, created_at, completed_at, seq)
		SELECT translate(lpad(g::text, 26, '0'), '0123456789', 'ABCDEFGHIJ'), 'bench', 3, 'done',
			1e18::bigint + 2*g, 1e18::bigint + 2*g + 1, g
		FROM generate_series(1, $1::bigint) AS g`, n)
	require.NoError(b, err)
	_, err = conn.Exec(ctx, `UPDATE ledger SET next_seq = $1 WHERE id = 1`, n+1)
	require.NoError(b, err)
	_, err = conn.Exec(ctx, `ANALYZE jobs`)
	require.NoError(b, err)

	st, err = postgres.Open(ctx, dsn, cfg, postgres.Options{})
	require.NoError(b, err)
	require.NoError(b, st.CheckInvariants(), "the seeded rows")
	return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{})
}
