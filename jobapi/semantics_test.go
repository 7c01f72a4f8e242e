package jobapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// Regression tests for the HTTP semantics of RFC 9110 and the contract
// around them; each is named after the defect it pins.

// TestHeadMissingOnGetRoutes pins HEAD, which RFC 9110 §9.3.2 requires
// wherever GET is served and which every route answered 405: each GET route
// answers HEAD with GET's status and headers and no body, and lists HEAD in
// Allow.
func TestHeadMissingOnGetRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	id := h.submit("h", nil)
	h.waitDone(id)
	for _, path := range []string{
		"/jobs/" + id, "/jobs/" + id + "/wait?timeout=0", "/jobs/" + id + "/result",
		"/jobs/nope", "/jobs/nope/result", "/healthz", "/metrics",
	} {
		t.Run(path, func(t *testing.T) {
			get := h.get(path)
			head := h.do(http.MethodHead, path, "", nil)
			require.Equal(t, get.Status, head.Status)
			require.Empty(t, head.Raw)
			for _, k := range []string{"Content-Type", "Cache-Control"} {
				require.Equal(t, get.Header.Get(k), head.Header.Get(k), k)
			}
			if path != "/metrics" { // the metrics move between the two requests
				require.Equal(t, get.Header.Get("Content-Length"), head.Header.Get("Content-Length"))
			}
		})
	}
	r := h.do(http.MethodPut, "/jobs/"+id, "", nil)
	requireProblem(t, r, http.StatusMethodNotAllowed, "method not allowed")
	require.Equal(t, "GET, HEAD", r.Header.Get("Allow"))
}

// TestOptionsStar404 pins OPTIONS *, a question about the server as a
// whole (RFC 9110 §9.3.7) that was answered 404 "no such route": it is a
// 200 with no content and an Allow of every method the API accepts.
func TestOptionsStar404(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "*", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "GET, HEAD, OPTIONS, POST", rec.Header().Get("Allow"))
	require.Equal(t, "0", rec.Header().Get("Content-Length"))
	require.Empty(t, rec.Body.Bytes())

	accepted := map[string]bool{http.MethodOptions: true}
	for _, methods := range jobapi.Routes(h.srv) {
		for _, m := range methods {
			accepted[m] = true
		}
	}
	for _, m := range strings.Split(rec.Header().Get("Allow"), ", ") {
		require.True(t, accepted[m], "Allow lists %s, which nothing accepts", m)
		delete(accepted, m)
	}
	require.Empty(t, accepted, "methods accepted but not in Allow")
}

// TestRetryAfterMissingOn503 walks every cause of a 503 and pins that each
// carries Retry-After; only the 429 did.
func TestRetryAfterMissingOn503(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, r reply, detail string) {
		t.Helper()
		requireProblem(t, r, http.StatusServiceUnavailable, detail)
		require.Equal(t, "1", r.Header.Get("Retry-After"))
	}
	t.Run("async disabled", func(t *testing.T) {
		h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo"; c.AsyncEnabled = false })
		for _, c := range []struct{ method, path string }{
			{http.MethodPost, "/jobs"},
			{http.MethodGet, "/jobs/x"},
			{http.MethodGet, "/jobs/x/wait"},
			{http.MethodGet, "/jobs/x/result"},
			{http.MethodPost, "/jobs/x/cancel"},
		} {
			check(t, h.do(c.method, c.path, "application/json", []byte(`{}`)), "asynchronous jobs are disabled")
		}
	})
	t.Run("shutting down", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = h.srv.Shutdown(ctx) // nothing runs: nil or ctx's error alike
		check(t, h.postJSON("/jobs", map[string]any{}), "server shutting down")
		check(t, h.postJSON("/infer", map[string]any{}), "server shutting down")
		check(t, h.get("/healthz"), "server shutting down")
	})
	t.Run("no worker", func(t *testing.T) {
		g := newGate()
		g.ignoreCtx = true // the job keeps the one worker past its deadline
		h := newHarness(t, g, nil)
		h.submit("holds the worker", nil)
		<-g.started
		got := make(chan reply, 1)
		go func() { got <- h.postJSON("/infer", map[string]any{"task_id": "s"}) }()
		// The job's deadline and the infer's: the infer is waiting for a
		// worker, or about to.
		until(t, "infer's deadline armed", func() bool { return h.clock.Pending() == 2 })
		h.clock.Advance(jobapi.DefaultAsyncTimeout)
		check(t, <-got, "no worker became free before the deadline")
		g.release <- struct{}{}
		<-g.ended
	})
}

// TestTitlesNotRFC9110 pins the problem titles of 413 and 422, which were
// net/http's older phrases ("Request Entity Too Large", "Unprocessable
// Entity") rather than RFC 9110's.
func TestTitlesNotRFC9110(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo"; c.MaxBodyBytes = 64 })
	r := h.do(http.MethodPost, "/jobs", "application/json", []byte(`{"task_id":"`+strings.Repeat("x", 100)+`"}`))
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "%s", r.Raw)
	require.Equal(t, "Content Too Large", r.Body["title"])
	r = h.postJSON("/infer", map[string]any{"params": map[string]any{"fail": "boom"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Raw)
	require.Equal(t, "Unprocessable Content", r.Body["title"])
}

// TestLocationWrongUnderPrefix pins the 202's Location, which was the
// absolute path /jobs/{id} and so wrong when the handler is mounted under
// a prefix: resolved against the request URL it names the new job, at the
// root and under http.StripPrefix alike.
func TestLocationWrongUnderPrefix(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "/api", "/v1/ledger"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			cfg := jobapi.DefaultConfig()
			cfg.Model = "echo"
			srv, err := jobapi.New(memoryStore(t, cfg, nil), cfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
			require.NoError(t, err)
			mux := http.NewServeMux()
			mux.Handle(prefix+"/", http.StripPrefix(prefix, srv))
			ts := httptest.NewServer(mux)
			t.Cleanup(func() {
				checkDrained(t, srv, nil)
				ts.Close()
			})

			resp, err := ts.Client().Post(ts.URL+prefix+"/jobs", "application/json", strings.NewReader(`{"task_id":"p"}`))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", body)
			loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
			require.NoError(t, err)
			id := strings.TrimPrefix(loc.Path, prefix+"/jobs/")
			require.NotEqual(t, loc.Path, id, "Location %q resolves to %s", resp.Header.Get("Location"), loc)
			require.Contains(t, string(body), `"job_id":"`+id+`"`)

			resp, err = ts.Client().Get(loc.String())
			require.NoError(t, err)
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			require.Contains(t, string(body), `"job_id":"`+id+`"`)
		})
	}
}

// TestCacheControlMissingOnJobState pins Cache-Control: no-store on every
// reply that tells a job's state; a cache could have served a stale
// snapshot, or a result after its job was evicted. It is on every reply of
// the /jobs routes, as docs/http.md says: the listing, and the 405 of a
// method a route lacks, which was once answered before the header was set.
func TestCacheControlMissingOnJobState(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo"; c.Workers = 2 })
	accepted := h.postJSON("/jobs", map[string]any{"task_id": "c", "params": map[string]any{"sleep_ms": 600000}})
	require.Equal(t, http.StatusAccepted, accepted.Status)
	id := accepted.Body["job_id"].(string)
	done := h.submit("d", nil)
	h.waitDone(done)
	for name, r := range map[string]reply{
		"202":      accepted,
		"snapshot": h.get("/jobs/" + done),
		"wait":     h.get("/jobs/" + done + "/wait?timeout=0"),
		"result":   h.get("/jobs/" + done + "/result"),
		"cancel":   h.do(http.MethodPost, "/jobs/"+id+"/cancel", "", nil),
		"409":      h.get("/jobs/" + id + "/result"),
		"404":      h.get("/jobs/nope"),
		"list":     h.get("/jobs"),
		"405 job":  h.do(http.MethodDelete, "/jobs/"+done, "", nil),
		"405 jobs": h.do(http.MethodPut, "/jobs", "", nil),
	} {
		require.Less(t, r.Status, 500, "%s: %s", name, r.Raw)
		require.Equal(t, "no-store", r.Header.Get("Cache-Control"), name)
	}
}

// TestMetricsLackProcessCollector pins the process collector, missing from
// /metrics: memory, CPU and open files beside the Go runtime's series.
func TestMetricsLackProcessCollector(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	r := h.get("/metrics")
	require.Equal(t, http.StatusOK, r.Status)
	text := string(r.Raw)
	require.Contains(t, text, "\ngo_goroutines ")
	require.Contains(t, text, "\ngo_memstats_heap_alloc_bytes ")
	if runtime.GOOS == "linux" { // the process collector reads /proc
		for _, name := range []string{"process_open_fds", "process_max_fds", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
			require.Contains(t, text, "\n"+name+" ", name)
		}
	}
}
