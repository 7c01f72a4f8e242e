package jobapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

func echoConfig(c *jobapi.Config) { c.Model = "echo" }

func TestPostJobThenWaitAndResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	r := h.postJSON("/jobs", map[string]any{"task_id": "t-1", "params": map[string]any{"x": 1}})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	id := r.Body["job_id"].(string)
	require.NotEmpty(t, id)
	require.Equal(t, "PENDING", r.Body["state"])
	require.Equal(t, "jobs/"+id, r.Header.Get("Location")) // relative: TestLocationWrongUnderPrefix

	done := h.waitDone(id)
	require.Equal(t, client.Done, done.State)
	require.Equal(t, "t-1", done.TaskID)
	for _, at := range []time.Time{done.CreatedAt, done.StartedAt, done.CompletedAt} {
		require.False(t, at.IsZero(), "%+v", done)
	}
	require.Empty(t, done.Error)

	for range 2 { // repeatable
		res := h.get("/jobs/" + id + "/result")
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"job_id": id, "task_id": "t-1", "state": "DONE",
			"result": map[string]any{"x": float64(1)}}, res.Body)
	}
	require.Equal(t, client.Done, h.snapshot(id).State)
}

func TestUnknownJob404(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	for _, c := range []struct {
		route string
		call  func() error
	}{
		{"GET /jobs/{id}", func() error { _, err := h.api.Snapshot(t.Context(), "nope"); return err }},
		{"GET /jobs/{id}/wait", func() error { _, err := h.api.Wait(t.Context(), "nope", 0); return err }},
		{"GET /jobs/{id}/result", func() error { _, err := h.api.Result(t.Context(), "nope"); return err }},
		{"POST /jobs/{id}/cancel", func() error { _, err := h.api.Cancel(t.Context(), "nope"); return err }},
	} {
		err := c.call()
		requireAPIError(t, err, http.StatusNotFound, "no such job")
		require.ErrorIs(t, err, client.ErrNotFound, c.route)
	}
	// The problem's media type, which the client does not check.
	requireProblem(t, h.get("/jobs/nope"), http.StatusNotFound, "no such job")
	requireProblem(t, h.get("/nowhere"), http.StatusNotFound, "no such route")
}

// TestRequestsNoRouteMatches pins the replies http.ServeMux would otherwise
// write itself (a redirect, a bare 400, a plain-text 404): they are the
// API's own 404 problem.
func TestRequestsNoRouteMatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	for _, c := range []struct{ method, target string }{
		{http.MethodGet, "//jobs/nope"},
		{http.MethodGet, "/jobs/./nope"},
		{http.MethodPost, "/jobs/x/../../jobs"},
		{http.MethodGet, "*"},
		{http.MethodConnect, "/jobs"},
	} {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, httptest.NewRequest(c.method, c.target, nil))
			r := reply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
			require.NoError(t, json.Unmarshal(r.Raw, &r.Body), "%s", r.Raw)
			requireProblem(t, r, http.StatusNotFound, "no such route")
		})
	}
}

// TestUnroutedRequestsUncounted pins the requests the server answers
// before its mux (OPTIONS *, another method on "*", CONNECT, a path not in
// canonical form), which never reached the requests metric, though
// docs/http.md counts every request no route matches as "unmatched".
func TestUnroutedRequestsUncounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	for _, c := range []struct{ method, target string }{
		{http.MethodGet, "//jobs/nope"},
		{http.MethodGet, "/jobs/./nope"},
		{http.MethodGet, "*"},
		{http.MethodConnect, "/jobs"},
		{http.MethodGet, "/nowhere"},
		{http.MethodOptions, "*"},
	} {
		h.srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.target, nil))
	}
	var unmatched []string
	for _, line := range strings.Split(string(h.get("/metrics").Raw), "\n") {
		if strings.Contains(line, `route="unmatched"`) {
			unmatched = append(unmatched, line)
		}
	}
	require.Equal(t, []string{
		`jobledger_http_requests_total{code="200",route="unmatched"} 1`,
		`jobledger_http_requests_total{code="404",route="unmatched"} 5`,
	}, unmatched)
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.MaxBodyBytes = 256 })
	long := strings.Repeat("x", 129)
	cases := []struct {
		name, contentType, body string
		status                  int
		detail                  string
	}{
		{"bad JSON", "application/json", `{"image":`, 400, "body is not valid JSON"},
		{"unknown field", "application/json", `{"image":"AAAA","extra":1}`, 400, "body has an unknown field"},
		{"wrong type", "application/json", `{"image":5}`, 400, "body has a field of the wrong type"},
		{"trailing data", "application/json", `{"image":"AAAA"} {}`, 400, "body has data after the JSON object"},
		{"missing image", "application/json", `{"task_id":"a"}`, 400, "image is required"},
		{"bad base64", "application/json", `{"image":"not base64!"}`, 400, "image is not valid base64"},
		{"long task_id", "application/json", `{"task_id":"` + long + `","image":"AAAA"}`, 400, "task_id exceeds 128 bytes"},
		{"NUL in task_id", "application/json", `{"task_id":"a\u0000b","image":"AAAA"}`, 400, "task_id must not contain control characters"},
		{"control in task_id", "application/json", `{"task_id":"a\nb","image":"AAAA"}`, 400, "task_id must not contain control characters"},
		{"params not object", "application/json", `{"image":"AAAA","params":[1]}`, 400, "params must be a JSON object"},
		{"too large", "application/json", `{"image":"` + strings.Repeat("A", 400) + `"}`, 413, "body exceeds max_body_bytes"},
		{"text content type", "text/plain", `{"image":"AAAA"}`, 415, "Content-Type must be application/json"},
		{"no content type", "", `{"image":"AAAA"}`, 415, "Content-Type must be application/json"},
	}
	for _, path := range []string{"/jobs", "/infer"} {
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				r := h.do(http.MethodPost, path, c.contentType, []byte(c.body))
				requireProblem(t, r, c.status, c.detail)
			})
		}
	}
}

func TestWrongMethod405(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/jobs", "GET, HEAD, POST"},
		{http.MethodDelete, "/jobs/x", "GET, HEAD"},
		{http.MethodPost, "/jobs/x/wait", "GET, HEAD"},
		{http.MethodPut, "/jobs/x/result", "GET, HEAD"},
		{http.MethodGet, "/jobs/x/cancel", "POST"},
		{http.MethodGet, "/infer", "POST"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
		{http.MethodOptions, "/metrics", "GET, HEAD"},
	} {
		t.Run(c.method+c.path, func(t *testing.T) {
			r := h.do(c.method, c.path, "", nil)
			requireProblem(t, r, http.StatusMethodNotAllowed, "method not allowed")
			require.Equal(t, c.allow, r.Header.Get("Allow"))
		})
	}
}

func TestAsyncDisabled503(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo"; c.AsyncEnabled = false })
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/jobs"},
		{http.MethodGet, "/jobs"},
		{http.MethodGet, "/jobs/x"},
		{http.MethodGet, "/jobs/x/wait"},
		{http.MethodGet, "/jobs/x/result"},
		{http.MethodPost, "/jobs/x/cancel"},
	} {
		r := h.do(c.method, c.path, "application/json", []byte(`{}`))
		requireProblem(t, r, http.StatusServiceUnavailable, "asynchronous jobs are disabled")
	}
	_, err := h.api.Infer(t.Context(), client.Request{TaskID: "s"})
	require.NoError(t, err)
}

func TestQueueZeroAdmitsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo"; c.AsyncMaxQueue = 0 })
	_, err := h.api.Submit(t.Context(), client.Request{})
	e := requireAPIError(t, err, http.StatusTooManyRequests, "job queue is full")
	require.ErrorIs(t, err, client.ErrQueueFull)
	require.Equal(t, time.Second, e.RetryAfter)
}

func TestWaitTimeoutParameter(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	id := h.submit("w", nil)
	<-g.started
	for _, bad := range []string{"-1", "abc", "1.5", "", "+3", "0x10"} {
		r := h.get("/jobs/" + id + "/wait?timeout=" + bad)
		requireProblem(t, r, http.StatusBadRequest, "timeout must be a non-negative integer of milliseconds")
	}
	s, err := h.api.Wait(t.Context(), id, 0)
	require.NoError(t, err)
	require.Equal(t, client.Running, s.State)
	require.NotZero(t, s.StartedAt)
	require.Zero(t, s.CompletedAt)

	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(id).State)
}

func TestWaitDefaultIsMaxWait(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.MaxWait = 0 })
	id := h.submit("w", nil)
	// With max_wait 0 both the default and a larger timeout return at once.
	s, err := h.api.Wait(t.Context(), id, -1) // no timeout: the server's max_wait
	require.NoError(t, err)
	require.False(t, s.State.Terminal(), "%+v", s)
	r := h.get("/jobs/" + id + "/wait?timeout=99999999999999999999999")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Contains(t, []any{"PENDING", "RUNNING"}, r.Body["state"])
	<-g.started
	g.release <- struct{}{}
}

func TestWaitWakesOnCompletion(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	id := h.submit("w", nil)
	<-g.started
	got := make(chan client.Snapshot, 1)
	go func() {
		s, err := h.api.Wait(context.Background(), id, -1) // no timeout: max_wait, 30 s
		if err != nil {
			t.Errorf("wait: %v", err)
		}
		got <- s
	}()
	until(t, "waiter blocked", func() bool { return jobapi.Waiting(h.srv) == 1 })
	g.release <- struct{}{}
	require.Equal(t, client.Done, (<-got).State)
}

func TestResultNotDone409(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	id := h.submit("r", nil)
	<-g.started
	_, err := h.api.Result(t.Context(), id)
	e := requireAPIError(t, err, http.StatusConflict, "job is not DONE")
	require.ErrorIs(t, err, client.ErrNotDone)
	require.Equal(t, client.Running, e.State)
	require.Equal(t, id, e.JobID)
	g.release <- struct{}{}
	h.waitDone(id)
}

func TestHealthzAndMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	r := h.get("/healthz")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "ok", r.Body["status"])
	id := h.submit("m", nil)
	h.waitDone(id)
	_, err := h.api.Cancel(t.Context(), id)
	require.ErrorIs(t, err, client.ErrTerminal)

	// The job's counters move just after its terminal state is published,
	// which is what woke the wait: read until they have.
	var text string
	until(t, "completion counted", func() bool {
		m := h.get("/metrics")
		require.Equal(t, http.StatusOK, m.Status)
		text = string(m.Raw)
		return strings.Contains(text, "jobledger_job_run_seconds_count 1")
	})
	for _, want := range []string{
		"jobledger_queue_depth 0",
		"jobledger_jobs_retained 1",
		"jobledger_jobs_submitted_total 1",
		"jobledger_jobs_rejected_total 0",
		`jobledger_jobs_completed_total{state="DONE"} 1`,
		"jobledger_job_queue_wait_seconds_count 1",
		"jobledger_job_run_seconds_count 1",
		"jobledger_waiters 0",
		`jobledger_http_requests_total{code="202",route="/jobs"} 1`,
		`jobledger_http_requests_total{code="409",route="/jobs/{id}/cancel"} 1`,
	} {
		require.Contains(t, text, want)
	}
}
