package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/console"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/model"
)

// bundle is a job API on a memory store with the console mounted in
// front. Its model is echo's, except that a job whose params hold
// "hold": true runs until its context ends (a cancel, the deadline, the
// shutdown), so that tests can keep jobs RUNNING and PENDING.
type bundle struct {
	srv     *jobapi.Server
	con     *console.Console
	handler http.Handler
}

func setup(t *testing.T, workers int, opts console.Options) *bundle {
	t.Helper()
	cfg := jobapi.DefaultConfig()
	cfg.Workers = workers
	cfg.AsyncMaxQueue = 64
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
	require.NoError(t, err)
	held := jobapi.ModelFunc(func(ctx context.Context, req jobapi.Request) (any, error) {
		var p struct{ Hold bool }
		_ = json.Unmarshal(req.Params, &p)
		if p.Hold {
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		return model.Echo{}.Run(ctx, req)
	})
	srv, err := jobapi.New(store, cfg, jobapi.Options{Model: held, LedgerJobTTL: cfg.AsyncJobTTL,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	opts.API, opts.Overview = srv, srv.Overview
	con, err := console.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = srv.Shutdown(ctx) // no grace: the held jobs end now
		_ = srv.Close()
		_ = con.Close()
		_ = store.Close()
	})
	return &bundle{srv: srv, con: con, handler: console.Mount(srv, con)}
}

// do sends a request to the mounted handler and returns the reply.
func (b *bundle) do(t *testing.T, method, target string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	return rec.Result()
}

// page GETs target and returns its body, requiring status.
func (b *bundle) page(t *testing.T, target string, status int) string {
	t.Helper()
	resp := b.do(t, http.MethodGet, target, nil)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "GET %s: %s", target, body)
	return string(body)
}

// submit posts a job through the API and returns its id.
func (b *bundle) submit(t *testing.T, taskID string, params any) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"task_id": taskID, "params": params})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var acc struct {
		JobID string `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &acc))
	return acc.JobID
}

// wait blocks until job id is terminal and returns its snapshot.
func (b *bundle) wait(t *testing.T, id string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/jobs/"+id+"/wait?timeout=10000", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var snap map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &snap))
	require.Contains(t, []any{"DONE", "FAILED", "TIMEOUT"}, snap["state"], "job %s did not end", id)
	return snap
}

// waitRunning blocks, bounded, until the server runs n models.
func (b *bundle) waitRunning(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return b.srv.Overview().Busy == n }, 10e9, 1e6)
}

// wait0 is job id's state now.
func (b *bundle) wait0(t *testing.T, id string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/jobs/"+id, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var snap map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &snap))
	return snap["state"].(string)
}
