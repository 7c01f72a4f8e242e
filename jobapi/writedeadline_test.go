package jobapi_test

import (
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// TestWriteDeadlineOverflows pins the sum of the http.Server's
// WriteTimeout and a route's hold, computed without saturation: with
// max_wait or async_timeout near the largest value the config accepts it
// wrapped round, the write deadline landed in the past, and every reply
// of a wait, a Prefer: wait submit and /infer was cut off.
func TestWriteDeadlineOverflows(t *testing.T) {
	t.Parallel()
	longest := time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond
	cfg := jobapi.DefaultConfig()
	cfg.Model, cfg.Workers, cfg.MaxWait, cfg.AsyncTimeout = "echo", 1, longest, longest
	clock := newFakeClock()
	srv, err := jobapi.New(memoryStore(t, cfg, clock), cfg, jobapi.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.WriteTimeout = time.Minute
	ts.Start()
	t.Cleanup(func() {
		checkDrained(t, srv, clock)
		ts.Close()
	})
	h := &harness{t: t, srv: srv, ts: ts, api: newClient(t, ts), clock: clock}

	id := h.submit("plain", nil)
	_, err = h.api.Wait(t.Context(), id, 0)
	require.NoError(t, err, "the wait is answered")
	_, err = h.api.Infer(t.Context(), client.Request{TaskID: "sync"})
	require.NoError(t, err, "/infer is answered")

	req, err := http.NewRequest(http.MethodPost, ts.URL+"/jobs", strings.NewReader(`{"task_id":"waited"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "wait=99999999999")
	resp, err := ts.Client().Do(req)
	require.NoError(t, err, "the Prefer: wait submit is answered")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
