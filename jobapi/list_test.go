package jobapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// listIDs returns the job ids of a GET /jobs reply, and its next_cursor.
func listIDs(t *testing.T, r reply) ([]string, string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var ids []string
	for _, j := range r.Body["jobs"].([]any) {
		ids = append(ids, j.(map[string]any)["job_id"].(string))
	}
	next, _ := r.Body["next_cursor"].(string)
	return ids, next
}

// TestListJobs: GET /jobs lists newest first, each item the body of GET
// /jobs/{id}; next_cursor walks the pages and is absent on the last;
// state and task_id filter.
func TestListJobs(t *testing.T) {
	h := newHarness(t, nil, echoConfig)
	a := h.submit("a", nil)
	b := h.submit("b", nil)
	c := h.submit("a", nil)
	for _, id := range []string{a, b, c} {
		h.waitDone(id)
	}
	all := h.get("/jobs")
	ids, next := listIDs(t, all)
	require.Equal(t, []string{c, b, a}, ids)
	require.Empty(t, next)
	for i, j := range all.Body["jobs"].([]any) {
		require.Equal(t, h.get("/jobs/"+ids[i]).Body, j.(map[string]any), "an item is GET /jobs/{id}")
	}

	ids, next = listIDs(t, h.get("/jobs?limit=2"))
	require.Equal(t, []string{c, b}, ids)
	require.NotEmpty(t, next)
	ids, next = listIDs(t, h.get("/jobs?limit=2&cursor="+url.QueryEscape(next)))
	require.Equal(t, []string{a}, ids)
	require.Empty(t, next)

	ids, _ = listIDs(t, h.get("/jobs?task_id=a"))
	require.Equal(t, []string{c, a}, ids)
	ids, _ = listIDs(t, h.get("/jobs?state=DONE&task_id=b"))
	require.Equal(t, []string{b}, ids)
	ids, _ = listIDs(t, h.get("/jobs?state=PENDING"))
	require.Empty(t, ids)
	ids, _ = listIDs(t, h.get("/jobs?limit=99999999999999999999999"))
	require.Len(t, ids, 3, "a limit beyond the cap is the cap")
}

// TestListJobsEmptyTaskID pins the bug where GET /jobs?task_id= (present
// and empty) listed every job: a filter that is present is a filter, and
// the empty task id lists only the jobs submitted without one.
func TestListJobsEmptyTaskID(t *testing.T) {
	h := newHarness(t, nil, echoConfig)
	a := h.submit("a", nil)
	none := h.submit("", nil)
	for _, id := range []string{a, none} {
		h.waitDone(id)
	}
	ids, _ := listIDs(t, h.get("/jobs?task_id="))
	require.Equal(t, []string{none}, ids)
	ids, _ = listIDs(t, h.get("/jobs?task_id=&state=DONE"))
	require.Equal(t, []string{none}, ids)
	ids, _ = listIDs(t, h.get("/jobs"))
	require.Equal(t, []string{none, a}, ids, "an absent task_id lists every job")
}

// TestListJobsBadParameters: each bad parameter is a 400 problem that
// names it, and reads nothing.
func TestListJobsBadParameters(t *testing.T) {
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
