package postgres_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestListStatePagePlan: a page filtered by a state that few retained jobs
// are in (RUNNING among 20,000 finished jobs, the database's statistics
// up to date) reads that state's jobs alone, by jobs_state_admission in
// order (schema 5), and neither walks jobs_admission checking each row
// nor sorts.
func TestListStatePagePlan(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1}, postgres.Options{})
	require.NoError(t, err)
	s.Close() // the schema is all this test needs
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, q := range []string{
		`INSERT INTO jobs (id, task_id, state, result, created_at, completed_at, seq)
			SELECT 'done' || g, 't', 2, '\x00', g, g, g FROM generate_series(1, 20000) g`,
		`INSERT INTO jobs (id, task_id, state, created_at, started_at)
			SELECT 'running' || g, 't', 1, g, g FROM generate_series(1, 5) g`,
		`ANALYZE jobs`,
	} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	rows, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) `+postgres.ListQueries["state"],
		int64(1)<<62, int16(ledgertype.Running), 21, (*string)(nil))
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	require.Contains(t, plan, "Index Scan Backward using jobs_state_admission on jobs", plan)
	require.NotContains(t, plan, "Sort", plan)
	require.NotContains(t, plan, "jobs_admission", plan)
}

// TestCheckInvariantsListOrder: CheckInvariants' ListOrderInv finds a job
// whose ordinal the identity sequence never handed out (a row written
// with OVERRIDING SYSTEM VALUE, as a restore that forgot the sequence
// would leave it), and two jobs that share an ordinal once the unique
// index is gone: a walk would then skip jobs admitted later, or list one
// where the other belongs.
func TestCheckInvariantsListOrder(t *testing.T) {
	t.Parallel()
	for name, corrupt := range map[string][]string{
		"beyond the sequence": {
			`INSERT INTO jobs (id, n, task_id, state, request, created_at) OVERRIDING SYSTEM VALUE
				VALUES ('late', 1000, 't', 0, '\x00', 1)`,
			`UPDATE ledger SET depth = depth + 1`,
		},
		"shared": {
			`DROP INDEX jobs_admission`,
			`INSERT INTO jobs (id, n, task_id, state, request, created_at) OVERRIDING SYSTEM VALUE
				SELECT 'twin', n, 't', 0, '\x00', 1 FROM jobs`,
			`UPDATE ledger SET depth = depth + 1`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := newDatabase(t)
			s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{})
			require.NoError(t, err)
			defer s.Close()
			_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte(`{}`))
			require.NoError(t, err)
			require.NoError(t, s.CheckInvariants())
			conn, err := pgx.Connect(ctx, dsn)
			require.NoError(t, err)
			defer conn.Close(ctx)
			for _, q := range corrupt {
				_, err := conn.Exec(ctx, q)
				require.NoError(t, err, q)
			}
			require.ErrorContains(t, s.CheckInvariants(), "ListOrderInv")
		})
	}
}
