package sqlite_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
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
		`DROP INDEX jobs_admission`,
		`DROP INDEX jobs_task_admission`,
		`ALTER TABLE jobs DROP COLUMN n`,
		`DELETE FROM meta WHERE key = 'next_n'`,
		`UPDATE meta SET value = 2 WHERE key = 'schema_version'`,
	)
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
