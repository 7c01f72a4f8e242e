package jobtable_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// ids returns the ids of a page.
func ids(page []jobtable.Snapshot) []string {
	out := make([]string, len(page))
	for i, s := range page {
		out[i] = s.ID
	}
	return out
}

// TestListBadQuery: a negative limit and a state that is none are
// ErrBadQuery; a limit beyond the cap lists MaxListLimit.
func TestListBadQuery(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 200})
	_, _, err := tab.List(jobtable.ListQuery{Limit: -1})
	require.ErrorIs(t, err, jobtable.ErrBadQuery)
	_, _, err = tab.List(jobtable.ListQuery{ByState: true, State: 9})
	require.ErrorIs(t, err, jobtable.ErrBadQuery)
	for range jobtable.MaxListLimit + 5 {
		mustSubmit(t, tab, "t")
	}
	page, next, err := tab.List(jobtable.ListQuery{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, page, jobtable.MaxListLimit)
	require.NotZero(t, next)
	page, _, err = tab.List(jobtable.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page, jobtable.DefaultListLimit)
}

// TestListCursorSurvivesEvictionAndAdmission pins the bug of a cursor that
// counts positions: a job evicted above the cursor, and one admitted,
// between two pages, neither shift the next page.
func TestListCursorSurvivesEvictionAndAdmission(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 10, JobTTL: -1, MaxCompleted: 1})
	var done []string
	for range 2 {
		done = append(done, toState(t, tab, ledgertype.Done))
	}
	for range 4 {
		mustSubmit(t, tab, "t") // evicts done[0] on the first
	}
	// Held, newest first: j6 j5 j4 j3 j2 (done[1]).
	page, next, err := tab.List(jobtable.ListQuery{Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"j6", "j5"}, ids(page))
	_, err = tab.Finish("j6", "r") // j6 listed, now retained ahead of done[1]...
	require.NoError(t, err)
	mustSubmit(t, tab, "t") // ...which this admission evicts
	page, next, err = tab.List(jobtable.ListQuery{Limit: 2, Before: next})
	require.NoError(t, err)
	require.Equal(t, []string{"j4", "j3"}, ids(page), "%s was evicted", done[1])
	require.Zero(t, next, "j3 is the oldest job held")
}

// TestListScanBudget: a filter that nothing matches ends a page short,
// with a cursor, rather than looking at every job under the lock; the walk
// still reaches the end.
func TestListScanBudget(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 3000})
	for range 2500 {
		mustSubmit(t, tab, "t")
	}
	q := jobtable.ListQuery{ByTaskID: true, TaskID: "none"}
	pages := 0
	for {
		page, next, err := tab.List(q)
		require.NoError(t, err)
		require.Empty(t, page)
		pages++
		if next == 0 {
			break
		}
		require.Less(t, pages, 10)
		q.Before = next
	}
	require.Equal(t, 3, pages)
}
