package jobapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// requestLines returns the lines of the requests metric for route.
func requestLines(h *harness, route string) []string {
	var out []string
	for _, line := range strings.Split(string(h.get("/metrics").Raw), "\n") {
		if strings.HasPrefix(line, "jobledger_http_requests_total{") && strings.Contains(line, `route="`+route+`"`) {
			out = append(out, line)
		}
	}
	return out
}

// serveGone serves a request that the client abandons once ready reports
// true, and returns what the handler wrote.
func serveGone(t *testing.T, h *harness, req *http.Request, ready func() bool) *httptest.ResponseRecorder {
	t.Helper()
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.srv.ServeHTTP(rec, req.WithContext(ctx))
	}()
	until(t, "the request is in flight", ready)
	hangUp()
	<-served
	return rec
}

// TestClientGoneCountedApart pins two defects of the requests metric: a
// client hanging up during /infer was answered, counted and logged as 503
// "server shutting down", and a handler that wrote nothing to a client gone
// (a Prefer: wait, a store call ended by the request's context) was
// counted 200, the default of a reply never written. Both are now counted
// under code="499", and nothing is written. So is a GET /jobs/{id}/wait
// whose client hangs up, which took the end of the request's context for
// its timeout and wrote the snapshot, counted 200.
func TestClientGoneCountedApart(t *testing.T) {
	t.Parallel()
	t.Run("infer", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		req := httptest.NewRequest(http.MethodPost, "/infer", strings.NewReader(`{"task_id":"gone"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := serveGone(t, h, req, func() bool { return len(g.started) == 1 })
		require.ErrorIs(t, <-g.ended, context.Canceled)
		require.Zero(t, rec.Body.Len(), "nothing written to a client gone: %s", rec.Body)
		require.Equal(t, []string{`jobledger_http_requests_total{code="499",route="/infer"} 1`}, requestLines(h, "/infer"))
	})
	t.Run("prefer wait", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(`{"task_id":"gone"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Prefer", "wait=5")
		rec := serveGone(t, h, req, func() bool { return jobapi.Waiting(h.srv) == 1 })
		require.Zero(t, rec.Body.Len(), "nothing written to a client gone: %s", rec.Body)
		require.Equal(t, []string{`jobledger_http_requests_total{code="499",route="/jobs"} 1`}, requestLines(h, "/jobs"))
		<-g.started
		g.release <- struct{}{} // its job runs on
	})
	t.Run("wait", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		id := h.submit("waited", nil)
		<-g.started
		req := httptest.NewRequest(http.MethodGet, "/jobs/"+id+"/wait?timeout=5000", nil)
		rec := serveGone(t, h, req, func() bool { return jobapi.Waiting(h.srv) == 1 })
		require.Zero(t, rec.Body.Len(), "nothing written to a client gone: %s", rec.Body)
		require.Equal(t, []string{`jobledger_http_requests_total{code="499",route="/jobs/{id}/wait"} 1`}, requestLines(h, "/jobs/{id}/wait"))
		g.release <- struct{}{} // its job runs on
	})
}
