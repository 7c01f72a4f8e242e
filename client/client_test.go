package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/auth"
	"github.com/jobledger/jobledger/ledger"
)

// serve starts a jobapi.Server (echo model, changed by edit) on an
// httptest server on 127.0.0.1, mounted at prefix ("" for the root), and
// returns a Client of it. Cleanup ends every job, then closes the server.
func serve(t *testing.T, prefix string, edit func(*jobapi.Config)) (*client.Client, *httptest.Server) {
	t.Helper()
	cfg := jobapi.DefaultConfig()
	cfg.Model = "echo"
	cfg.Workers = 2
	if edit != nil {
		edit(&cfg)
	}
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	srv, err := jobapi.New(store, cfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(t, err)
	var h http.Handler = srv
	if prefix != "" {
		mux := http.NewServeMux()
		mux.Handle(prefix+"/", http.StripPrefix(prefix, srv))
		h = mux
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()          // no grace: end every job now
		srv.Shutdown(ctx) // the cancelled grace is the error
	})
	c, err := client.New(ts.URL+prefix, client.Options{HTTPClient: ts.Client()})
	require.NoError(t, err)
	return c, ts
}

// apiError returns err as an *client.Error, failing the test if it is not.
func apiError(t *testing.T, err error) *client.Error {
	t.Helper()
	var e *client.Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestJobCycle(t *testing.T) {
	c, ts := serve(t, "", nil)
	ctx := context.Background()

	acc, err := c.Submit(ctx, client.Request{TaskID: "t1", Params: json.RawMessage(`{"n": 1}`)})
	require.NoError(t, err)
	require.NotEmpty(t, acc.JobID)
	require.Equal(t, client.Pending, acc.State)
	require.Equal(t, ts.URL+"/jobs/"+acc.JobID, acc.Location.String())

	snap, err := c.Wait(ctx, acc.JobID, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, client.Done, snap.State)
	require.True(t, snap.State.Terminal())
	require.Equal(t, "t1", snap.TaskID)
	require.Empty(t, snap.Error)
	require.False(t, snap.CompletedAt.Before(snap.StartedAt))
	require.False(t, snap.StartedAt.Before(snap.CreatedAt))
	require.Equal(t, snap.CompletedAt.Add(jobapi.DefaultAsyncJobTTL), snap.ExpiresAt)

	got, err := c.Snapshot(ctx, acc.JobID)
	require.NoError(t, err)
	require.Equal(t, snap, got)

	res, err := c.Result(ctx, acc.JobID)
	require.NoError(t, err)
	require.Equal(t, client.Result{JobID: acc.JobID, TaskID: "t1", State: client.Done, Result: json.RawMessage(`{"n":1}`)}, res)

	_, err = c.Cancel(ctx, acc.JobID)
	require.ErrorIs(t, err, client.ErrTerminal)
	e := apiError(t, err)
	require.Equal(t, http.StatusConflict, e.StatusCode)
	require.Equal(t, "job is already terminal", e.Detail)
	require.Equal(t, "Conflict", e.Title)
	require.Equal(t, "about:blank", e.Type)
	require.Equal(t, client.Done, e.State)
	require.Equal(t, acc.JobID, e.JobID)
	require.JSONEq(t, `409`, string(e.Members["status"]))
	require.Equal(t, http.MethodPost, e.Method)
	require.Equal(t, ts.URL+"/jobs/"+acc.JobID+"/cancel", e.URL)
	require.Contains(t, e.Error(), "409 job is already terminal (state DONE)")
}

// TestCancelAndNotDone follows a job that cannot end by itself: a wait
// that times out, a result refused while it runs, the cancel, and the
// result refused once it failed.
func TestCancelAndNotDone(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	acc, err := c.Submit(ctx, client.Request{Params: json.RawMessage(`{"sleep_ms": 600000}`)})
	require.NoError(t, err)

	snap, err := c.Wait(ctx, acc.JobID, 10*time.Millisecond)
	require.NoError(t, err)
	require.False(t, snap.State.Terminal(), snap.State)

	_, err = c.Result(ctx, acc.JobID)
	require.ErrorIs(t, err, client.ErrNotDone)
	require.Contains(t, []client.State{client.Pending, client.Running}, apiError(t, err).State)

	snap, err = c.Cancel(ctx, acc.JobID)
	require.NoError(t, err)
	require.Equal(t, client.Failed, snap.State)
	require.Equal(t, "canceled", snap.Error)
	require.False(t, snap.CompletedAt.IsZero())

	_, err = c.Result(ctx, acc.JobID)
	require.ErrorIs(t, err, client.ErrNotDone)
	require.Equal(t, client.Failed, apiError(t, err).State)
}

func TestNotFound(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"snapshot": func() error { _, err := c.Snapshot(ctx, "no-such-job"); return err },
		"wait":     func() error { _, err := c.Wait(ctx, "no-such-job", time.Second); return err },
		"result":   func() error { _, err := c.Result(ctx, "no-such-job"); return err },
		"cancel":   func() error { _, err := c.Cancel(ctx, "no-such-job"); return err },
	} {
		err := call()
		require.ErrorIs(t, err, client.ErrNotFound, name)
		e := apiError(t, err)
		require.Equal(t, http.StatusNotFound, e.StatusCode, name)
		require.Equal(t, "no such job", e.Detail, name)
	}
}

func TestQueueFull(t *testing.T) {
	c, _ := serve(t, "", func(cfg *jobapi.Config) { cfg.AsyncMaxQueue = 0 })
	_, err := c.Submit(context.Background(), client.Request{TaskID: "t"})
	require.ErrorIs(t, err, client.ErrQueueFull)
	require.NotErrorIs(t, err, client.ErrUnavailable)
	e := apiError(t, err)
	require.Equal(t, http.StatusTooManyRequests, e.StatusCode)
	require.Equal(t, time.Second, e.RetryAfter)
	require.Equal(t, "job queue is full", e.Detail)
}

func TestUnavailable(t *testing.T) {
	c, _ := serve(t, "", func(cfg *jobapi.Config) { cfg.AsyncEnabled = false })
	ctx := context.Background()
	_, err := c.Submit(ctx, client.Request{})
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Equal(t, time.Second, apiError(t, err).RetryAfter)
	_, err = c.Snapshot(ctx, "x")
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Equal(t, "asynchronous jobs are disabled", apiError(t, err).Detail)
}

// TestBadRequest: a 4xx that no sentinel names is still an *Error with its
// problem.
func TestBadRequest(t *testing.T) {
	c, _ := serve(t, "", nil)
	_, err := c.Submit(context.Background(), client.Request{Params: json.RawMessage(`"not an object"`)})
	e := apiError(t, err)
	require.Equal(t, http.StatusBadRequest, e.StatusCode)
	require.Equal(t, "params must be a JSON object", e.Detail)
	for _, s := range []error{client.ErrQueueFull, client.ErrNotFound, client.ErrNotDone, client.ErrTerminal, client.ErrUnavailable} {
		require.NotErrorIs(t, err, s)
	}

	_, err = c.Submit(context.Background(), client.Request{Params: json.RawMessage(`{`)})
	require.ErrorContains(t, err, "client: encoding the request")
}

// TestMountedUnderPrefix: under http.StripPrefix the server's relative
// Location resolves below the prefix, and every route is found there.
func TestMountedUnderPrefix(t *testing.T) {
	c, ts := serve(t, "/api", nil)
	ctx := context.Background()
	acc, err := c.Submit(ctx, client.Request{TaskID: "p"})
	require.NoError(t, err)
	require.Equal(t, ts.URL+"/api/jobs/"+acc.JobID, acc.Location.String())
	snap, err := c.Wait(ctx, acc.JobID, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, client.Done, snap.State)
	_, err = c.Result(ctx, acc.JobID)
	require.NoError(t, err)

	// The Location names the job: GET on it is the snapshot.
	resp, err := ts.Client().Get(acc.Location.String())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestInfer(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	res, err := c.Infer(ctx, client.Request{TaskID: "s", Params: json.RawMessage(`{"greeting":"hello"}`)})
	require.NoError(t, err)
	require.Equal(t, client.InferResult{TaskID: "s", Result: json.RawMessage(`{"greeting":"hello"}`)}, res)

	_, err = c.Infer(ctx, client.Request{Params: json.RawMessage(`{"fail":"boom"}`)})
	e := apiError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, e.StatusCode)
	require.Equal(t, "model failed", e.Detail)
	require.Equal(t, "boom", e.ModelError)
	require.Equal(t, "Unprocessable Content", e.Title)
}

func TestMetrics(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx := context.Background()
	acc, err := c.Submit(ctx, client.Request{})
	require.NoError(t, err)
	_, err = c.Wait(ctx, acc.JobID, 10*time.Second)
	require.NoError(t, err)
	m, err := c.Metrics(ctx)
	require.NoError(t, err)
	require.Equal(t, 1.0, m["jobledger_jobs_submitted_total"])
	require.Equal(t, 1.0, m[`jobledger_jobs_completed_total{state="DONE"}`])
	require.Equal(t, 0.0, m["jobledger_queue_depth"])
}

// TestContextFirst: a cancelled context stops the call before the server
// answers, with the context's error.
func TestContextFirst(t *testing.T) {
	c, _ := serve(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Submit(ctx, client.Request{})
	require.ErrorIs(t, err, context.Canceled)
	var e *client.Error
	require.False(t, errors.As(err, &e))
}

// TestConcurrentUse: one Client shared by GOMAXPROCS goroutines, under
// -race.
func TestConcurrentUse(t *testing.T) {
	c, _ := serve(t, "", func(cfg *jobapi.Config) { cfg.AsyncMaxQueue = 1 << 10 })
	ctx := context.Background()
	done := make(chan error)
	const n = 8
	for range n {
		go func() {
			acc, err := c.Submit(ctx, client.Request{Params: json.RawMessage(`{"sleep_ms":1}`)})
			if err == nil {
				_, err = c.Wait(ctx, acc.JobID, 10*time.Second)
			}
			if err == nil {
				_, err = c.Result(ctx, acc.JobID)
			}
			done <- err
		}()
	}
	for range n {
		require.NoError(t, <-done)
	}
}

// TestToken: Options.Token goes on every request as a bearer token, and a
// server's 401 and 403 unwrap to ErrUnauthorized and ErrForbidden.
func TestToken(t *testing.T) {
	cfg := jobapi.DefaultConfig()
	cfg.Model = "echo"
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	srv, err := jobapi.New(store, cfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(t, err)
	sub, line, err := auth.NewToken("acme", auth.RoleSubmit)
	require.NoError(t, err)
	keys, err := auth.Parse(strings.NewReader(line))
	require.NoError(t, err)
	ts := httptest.NewServer(auth.New(srv, keys))
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		srv.Shutdown(ctx) // the cancelled grace is the error
	})
	ctx := context.Background()

	anon, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client()})
	require.NoError(t, err)
	_, err = anon.Submit(ctx, client.Request{TaskID: "t"})
	require.ErrorIs(t, err, client.ErrUnauthorized)
	require.Equal(t, http.StatusUnauthorized, apiError(t, err).StatusCode)

	c, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client(), Token: sub})
	require.NoError(t, err)
	acc, err := c.Submit(ctx, client.Request{TaskID: "t"})
	require.NoError(t, err)
	snap, err := c.Wait(ctx, acc.JobID, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, client.State("DONE"), snap.State)
	_, err = c.List(ctx, client.ListQuery{})
	require.ErrorIs(t, err, client.ErrForbidden, "listing takes role admin")
	_, err = c.Snapshot(ctx, "nosuchjob")
	require.ErrorIs(t, err, client.ErrNotFound, "a route's own meaning comes first")

	_, err = client.New(ts.URL, client.Options{Token: "a b"})
	require.ErrorContains(t, err, "white space")
}
