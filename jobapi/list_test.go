package jobapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
)

// listIDs returns the job ids of the page of GET /jobs that q selects, and
// its next cursor.
func listIDs(t *testing.T, h *harness, q client.ListQuery) ([]string, string) {
	t.Helper()
	p, err := h.api.List(t.Context(), q)
	require.NoError(t, err)
	var ids []string
	for _, j := range p.Jobs {
		ids = append(ids, j.JobID)
	}
	return ids, p.NextCursor
}

// TestListJobs: GET /jobs lists newest first, each item the body of GET
// /jobs/{id}; next_cursor walks the pages and is absent on the last;
// state and task_id filter.
func TestListJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	a := h.submit("a", nil)
	b := h.submit("b", nil)
	c := h.submit("a", nil)
	for _, id := range []string{a, b, c} {
		h.waitDone(id)
	}
	raw := h.get("/jobs")
	require.Equal(t, http.StatusOK, raw.Status, "%s", raw.Raw)
	require.Equal(t, "application/json", raw.Header.Get("Content-Type"))
	require.NotContains(t, raw.Body, "next_cursor", "absent on the last page")

	all, err := h.api.List(t.Context(), client.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, all.NextCursor)
	var ids []string
	for _, j := range all.Jobs {
		require.Equal(t, h.snapshot(j.JobID), j, "an item is GET /jobs/{id}")
		ids = append(ids, j.JobID)
	}
	require.Equal(t, []string{c, b, a}, ids)

	ids, next := listIDs(t, h, client.ListQuery{Limit: 2})
	require.Equal(t, []string{c, b}, ids)
	require.NotEmpty(t, next)
	ids, next = listIDs(t, h, client.ListQuery{Limit: 2, Cursor: next})
	require.Equal(t, []string{a}, ids)
	require.Empty(t, next)

	ids, _ = listIDs(t, h, client.ListQuery{TaskID: "a"})
	require.Equal(t, []string{c, a}, ids)
	ids, _ = listIDs(t, h, client.ListQuery{State: client.Done, TaskID: "b"})
	require.Equal(t, []string{b}, ids)
	ids, _ = listIDs(t, h, client.ListQuery{State: client.Pending})
	require.Empty(t, ids)
	ids, _ = listIDs(t, h, client.ListQuery{Limit: 1000})
	require.Len(t, ids, 3, "a limit beyond the cap is the cap")
	r := h.get("/jobs?limit=99999999999999999999999")
	require.Equal(t, http.StatusOK, r.Status, "a limit past any integer is the cap: %s", r.Raw)
}

// TestListJobsEmptyTaskID pins the bug where GET /jobs?task_id= (present
// and empty) listed every job: a filter that is present is a filter, and
// the empty task id lists only the jobs submitted without one.
func TestListJobsEmptyTaskID(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	a := h.submit("a", nil)
	none := h.submit("", nil)
	for _, id := range []string{a, none} {
		h.waitDone(id)
	}
	ids, _ := listIDs(t, h, client.ListQuery{ByTaskID: true})
	require.Equal(t, []string{none}, ids)
	ids, _ = listIDs(t, h, client.ListQuery{ByTaskID: true, State: client.Done})
	require.Equal(t, []string{none}, ids)
	ids, _ = listIDs(t, h, client.ListQuery{})
	require.Equal(t, []string{none, a}, ids, "an absent task_id lists every job")
}

// TestListJobsBadParameters: each bad parameter is a 400 problem that
// names it, and reads nothing.
func TestListJobsBadParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	h.waitDone(h.submit("a", nil))
	for query, detail := range map[string]string{
		"state=done":              "state must be one of PENDING, RUNNING, DONE, FAILED, TIMEOUT",
		"state=":                  "state must be one of PENDING, RUNNING, DONE, FAILED, TIMEOUT",
		"state=DONE&state=FAILED": "state must be one of PENDING, RUNNING, DONE, FAILED, TIMEOUT",
		"limit=0":                 "limit must be a positive integer",
		"limit=-1":                "limit must be a positive integer",
		"limit=1.5":               "limit must be a positive integer",
		"limit=":                  "limit must be a positive integer",
		"limit=1&limit=2":         "limit must be a positive integer",
		"cursor=":                 "cursor is not one this server gave",
		"cursor=nonsense":         "cursor is not one this server gave",
		"cursor=AAAAAAAAAAA":      "cursor is not one this server gave",
		"task_id=a&task_id=b":     "task_id must be given at most once",
	} {
		requireProblem(t, h.get("/jobs?"+query), http.StatusBadRequest, detail)
	}
}
