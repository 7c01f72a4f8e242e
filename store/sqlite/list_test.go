package sqlite_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestListAfterMigratingSchema2: a file written before schema 3 (no
// admission ordinal) is numbered by Open from its rowids, so its jobs list
// newest first, and a job admitted afterwards is newer still.
func TestListAfterMigratingSchema2(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 8})
	s := e.open()
	var old []string
	for range 3 {
		old = append(old, mustSubmit(t, s, "old"))
	}
	require.NoError(t, s.Close())
	e.exec( // back to schema 2, as an older build left the file
		`DROP INDEX jobs_tenant_live`, // schema 6
		`DROP INDEX jobs_tenant_admission`,
		`DROP INDEX jobs_idem_key`,
		`ALTER TABLE jobs DROP COLUMN tenant`,
		`CREATE UNIQUE INDEX jobs_idem_key ON jobs (idem_key) WHERE idem_key IS NOT NULL`,
		`DELETE FROM meta WHERE key = 'commits'`, // schema 5
		`DROP INDEX jobs_state_admission`,        // schema 4
		`DROP INDEX jobs_admission`,
		`DROP INDEX jobs_task_admission`,
		`ALTER TABLE jobs DROP COLUMN n`,
		`DELETE FROM meta WHERE key = 'next_n'`,
		`UPDATE meta SET value = 2 WHERE key = 'schema_version'`,
	)
	require.NoError(t, os.Truncate(e.path+".lock", 0), "an older build wrote no commit mark")
	s = e.open()
	defer s.Close()
	newer := mustSubmit(t, s, "new")
	page, err := s.List(context.Background(), ledger.ListQuery{})
	require.NoError(t, err)
	var got []string
	for _, j := range page.Jobs {
		got = append(got, j.ID)
	}
	require.Equal(t, []string{newer, old[2], old[1], old[0]}, got)
	require.Empty(t, page.Next)
	checkInvariants(t, s)
}

// TestListQueryPlans: each page query reads its rows in order from the
// index that serves its filter, with no sort, so a page costs the rows it
// reads: in particular a page filtered by state (schema 4) searches that
// state's jobs alone instead of checking every job along the order, and a
// page of RUNNING jobs among many finished ones stays small.
func TestListQueryPlans(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 8})
	require.NoError(t, e.open().Close())
	db := e.rawDB()
	defer db.Close()
	for name, want := range map[string]string{
		"all":    "SEARCH jobs USING INDEX jobs_admission (n<?)",
		"task":   "SEARCH jobs USING INDEX jobs_task_admission (task_id=? AND n<?)",
		"state":  "SEARCH jobs USING INDEX jobs_state_admission (state=? AND n<?)",
		"tenant": "SEARCH jobs USING INDEX jobs_tenant_admission (tenant=? AND n<?)",
	} {
		rows, err := db.Query(`EXPLAIN QUERY PLAN `+sqlite.ListQueries[name], 10, 1, 5, "t", "a")
		require.NoError(t, err, name)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Equal(t, []string{want}, plan, "the plan of the %s page", name)
	}
}
