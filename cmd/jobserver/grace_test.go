package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListenerClosesWhenGraceStarts pins the bug where SIGTERM closed the
// listener at once (http.Server.Shutdown ran alongside the grace period), so
// that the result of a job finishing in the grace could be read only by a
// client already blocked in its wait. Now the server keeps answering reads
// on new connections through the grace, after its jobs have ended too,
// refuses new work with 503 and Retry-After, still cancels, and a second
// signal cuts the grace short.
func TestListenerClosesWhenGraceStarts(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	s := start(t, bin, "-model", "echo", "-workers", "2", "-grace", "1m")
	c := newFreshClient(t, s.addr)

	submit := func(body string) string {
		a := c.do(t, http.MethodPost, "/jobs", body)
		require.Equal(t, http.StatusAccepted, a.status, "%s", a.raw)
		return a.body["job_id"].(string)
	}
	// The first runs past the signal and ends in the grace; the second
	// would outlive it, and is cancelled in it.
	finishes := submit(`{"task_id":"finishes","params":{"sleep_ms":3000}}`)
	cancelled := submit(`{"task_id":"cancelled","params":{"sleep_ms":600000}}`)

	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	for i := 0; ; i++ { // the grace has begun once /healthz says so
		require.Less(t, i, 10_000, "/healthz never answered 503")
		a := c.do(t, http.MethodGet, "/healthz", "")
		if a.status == http.StatusServiceUnavailable {
			require.Equal(t, "1", a.header.Get("Retry-After"))
			break
		}
		require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
	}
	a := c.do(t, http.MethodGet, "/jobs/"+finishes, "")
	require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
	require.Contains(t, []any{"PENDING", "RUNNING"}, a.body["state"], "the job must still run in the grace")

	for _, path := range []string{"/jobs", "/infer"} { // new work
		a := c.do(t, http.MethodPost, path, `{"params":{}}`)
		require.Equal(t, http.StatusServiceUnavailable, a.status, "%s %s", path, a.raw)
		require.Equal(t, "1", a.header.Get("Retry-After"), path)
		require.Equal(t, "server shutting down", a.body["detail"], path)
	}

	a = c.do(t, http.MethodPost, "/jobs/"+cancelled+"/cancel", "") // not new work
	require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
	require.Equal(t, "FAILED", a.body["state"])
	require.Equal(t, "canceled", a.body["error"])

	for i := 0; ; i++ {
		require.Less(t, i, 10, "the job never ended")
		a = c.do(t, http.MethodGet, "/jobs/"+finishes+"/wait", "")
		require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
		if a.body["state"] != "PENDING" && a.body["state"] != "RUNNING" {
			break
		}
	}
	require.Equal(t, "DONE", a.body["state"], "%s", a.raw)
	a = c.do(t, http.MethodGet, "/jobs/"+finishes+"/result", "")
	require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
	require.Equal(t, map[string]any{"sleep_ms": float64(3000)}, a.body["result"])
	require.Equal(t, http.StatusOK, c.do(t, http.MethodGet, "/metrics", "").status)
	require.Equal(t, http.StatusOK, c.do(t, http.MethodGet, "/jobs/"+finishes+"/result", "").status, "still served")

	code, log := s.stop(t) // the second signal
	require.Equal(t, 0, code)
	require.Contains(t, log, "every job has ended")
	require.Contains(t, log, "grace period cut short")
	require.NotContains(t, log, "grace period over")
	require.True(t, strings.Contains(log, `"msg":"stopped"`), "no stop line in the log, which ends:\n%s", tail(log, 2000))
}
