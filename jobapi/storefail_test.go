package jobapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/model"
)

// store is the server's kind of store, one that checks its invariants, so
// that a wrapper that embeds it does too.
type store interface {
	ledger.Ledger[jobapi.Request, json.RawMessage]
	ledger.Checker
}

// newMemory is a memory store on clock, closed when the test ends.
func newMemory(t *testing.T, clock *fakeClock, maxQueue int) *ledger.Memory[jobapi.Request, json.RawMessage] {
	t.Helper()
	m, err := ledger.NewMemory[jobapi.Request, json.RawMessage](ledger.Config{MaxQueue: maxQueue, Now: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// errDisk stands for a durable store's I/O failure: none of the
// contract's answers, so the outcome of the call is unknown.
var errDisk = errors.New("disk I/O error")

// failing is a memory store whose calls fail with errDisk, as many times
// as the test asks, call by call; every other call reaches the store.
type failing struct {
	store
	err   error // what a failing call returns: errDisk unless a test says
	mu    sync.Mutex
	fails map[string]int // method -> failures to come; -1 for every one
}

func newFailing(t *testing.T, clock *fakeClock) *failing {
	return newFailingQueue(t, clock, 16)
}

// newFailingQueue is newFailing on a queue of maxQueue jobs.
func newFailingQueue(t *testing.T, clock *fakeClock, maxQueue int) *failing {
	return &failing{store: newMemory(t, clock, maxQueue), err: errDisk, fails: map[string]int{}}
}

// failNext makes the next n calls of method fail (n -1: all of them, 0:
// none any more).
func (f *failing) failNext(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[method] = n
}

func (f *failing) fail(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.fails[method]
	if n > 0 {
		f.fails[method] = n - 1
	}
	return n != 0
}

func (f *failing) Submit(ctx context.Context, s ledger.Submission, req jobapi.Request) (string, bool, error) {
	if f.fail("Submit") {
		return "", false, f.err
	}
	return f.store.Submit(ctx, s, req)
}

func (f *failing) TakeRequest(ctx context.Context, id string) (jobapi.Request, error) {
	if f.fail("TakeRequest") {
		return jobapi.Request{}, f.err
	}
	return f.store.TakeRequest(ctx, id)
}

func (f *failing) Start(ctx context.Context, id string) (ledger.Snapshot, error) {
	if f.fail("Start") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Start(ctx, id)
}

func (f *failing) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	if f.fail("Timeout") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Timeout(ctx, id, cause)
}

func (f *failing) Finish(ctx context.Context, id string, res json.RawMessage) (ledger.Snapshot, error) {
	if f.fail("Finish") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Finish(ctx, id, res)
}

func (f *failing) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	if f.fail("Fail") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Fail(ctx, id, cause)
}

func (f *failing) Snapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	if f.fail("Snapshot") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Snapshot(ctx, id)
}

func (f *failing) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	if f.fail("Wait") {
		return ledger.Snapshot{}, f.err
	}
	return f.store.Wait(ctx, id)
}

func (f *failing) Result(ctx context.Context, id string) (json.RawMessage, ledger.Snapshot, error) {
	if f.fail("Result") {
		return nil, ledger.Snapshot{}, f.err
	}
	return f.store.Result(ctx, id)
}

// logBuffer collects a server's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// requireStoreFailed checks the answer to a request whose store call
// failed: 503 with Retry-After.
func requireStoreFailed(t *testing.T, err error) {
	t.Helper()
	e := requireAPIError(t, err, http.StatusServiceUnavailable, "job store unavailable")
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Equal(t, time.Second, e.RetryAfter)
}

// TestStoreFailuresAnswer503: a store call that fails with anything but
// the contract's answers is answered 503 with Retry-After and logged, on
// every route that calls the store; the server goes on, and its
// bookkeeping stays whole (the harness checks it once drained).
func TestStoreFailuresAnswer503(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	st := newFailing(t, clock)
	logs := &logBuffer{}
	g := newGate()
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}, nil)

	st.failNext("Submit", 1)
	_, err := h.api.Submit(t.Context(), client.Request{TaskID: "lost"})
	requireStoreFailed(t, err)
	require.Contains(t, logs.String(), `"msg":"job store failed"`)
	require.Contains(t, logs.String(), "disk I/O error")
	require.Zero(t, st.Stats().Depth, "no job, and no runner")

	id := h.submit("kept", nil)
	<-g.started
	for _, c := range []struct {
		method string // the store's
		call   func() error
	}{
		{"Snapshot", func() error { _, err := h.api.Snapshot(t.Context(), id); return err }},
		{"Wait", func() error { _, err := h.api.Wait(t.Context(), id, 0); return err }},
		{"Result", func() error { _, err := h.api.Result(t.Context(), id); return err }},
		{"Fail", func() error { _, err := h.api.Cancel(t.Context(), id); return err }},
	} {
		st.failNext(c.method, 1)
		requireStoreFailed(t, c.call())
	}
	require.Equal(t, client.Running, h.snapshot(id).State, "the failed cancel changed nothing")
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitBounded(id).State)
	_, err = h.api.Result(t.Context(), id)
	require.NoError(t, err)
}

// lasting is a failing store that calls each of its failures lasting, as
// the SQLite store calls a damaged file's.
type lasting struct{ *failing }

func (lasting) Transient(error) bool { return false }

// TestStoreFailureEndsTheJob: when the store fails a runner's write
// (taking the request, starting the job, recording the outcome) with a
// failure it calls lasting, the runner ends the job FAILED "job store
// failure" rather than leave it holding its slot with no runner.
func TestStoreFailureEndsTheJob(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"TakeRequest", "Start", "Finish"} {
		t.Run(method, func(t *testing.T) {
			clock := newFakeClock()
			st := newFailing(t, clock)
			h := newHarnessOn(t, lasting{st}, jobapi.Options{Model: model.Echo{}, Clock: clock}, nil)
			st.failNext(method, 1)
			r := h.waitBounded(h.submit("t", nil))
			require.Equal(t, client.Failed, r.State)
			require.Equal(t, "job store failure", r.Error)
			require.Zero(t, st.Stats().Depth)
			require.Equal(t, client.Done, h.waitBounded(h.submit("next", nil)).State, "the server goes on")
		})
	}
}

// TestStoreRefusingEveryEnd: a store that fails every end leaves the job
// live; the runner tries again until Shutdown's hard stop ends the store's
// writes, then logs it and returns, so that Shutdown returns and no flight
// is left. The server's invariants then report the live job, and only it.
func TestStoreRefusingEveryEnd(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	st := newFailing(t, clock)
	logs := &logBuffer{}
	h := newHarnessOn(t, st, jobapi.Options{Model: model.Echo{}, Clock: clock,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}, nil)
	st.failNext("Finish", -1)
	st.failNext("Fail", -1)
	id := h.submit("t", nil)
	for n := range 3 {
		until(t, "a retry armed", func() bool { return clock.PendingIn(jobapi.RetryBackoff(n)) == 1 })
		clock.Advance(jobapi.RetryBackoff(n))
	}
	until(t, "the next retry armed", func() bool { return clock.PendingIn(jobapi.RetryBackoff(3)) == 1 })
	require.NotContains(t, logs.String(), "job left live", "the runner is still trying")

	grace, endGrace := context.WithCancel(context.Background())
	endGrace()
	shut := make(chan error, 1)
	go func() { shut <- h.srv.Shutdown(grace) }()
	// The job's deadline, the pending retry and the hard stop.
	until(t, "the hard stop armed", func() bool { return clock.Pending() == 3 })
	clock.Advance(jobapi.HardStop)
	require.ErrorIs(t, received(t, shut, "Shutdown returned at the hard stop"), context.Canceled)
	require.Contains(t, logs.String(), "job left live")
	err := h.srv.CheckInvariants()
	require.ErrorContains(t, err, "DrainInv: drained with 1 jobs PENDING or RUNNING")
	require.NotContains(t, err.Error(), "FlightsInv")
	require.NotContains(t, err.Error(), "TimersInv")
	require.Equal(t, client.Running, h.snapshot(id).State)

	st.failNext("Fail", 0) // as a restart would, end it, for the harness's own check
	_, err = st.Fail(context.Background(), id, errDisk)
	require.NoError(t, err)
}

// TestClose: Close leaves the store open for its owner; once the owner
// closes it, the API answers 503.
func TestClose(t *testing.T) {
	t.Parallel()
	t.Run("store closed by its owner", func(t *testing.T) {
		h := newHarness(t, model.Echo{}, nil)
		id := h.submit("t", nil)
		require.Equal(t, client.Done, h.waitBounded(id).State)
		requireShutdownReturns(t, h.srv)
		_, err := h.api.Snapshot(t.Context(), id)
		require.NoError(t, err, "reads are served after Shutdown")
		require.NoError(t, h.srv.Close())
		require.NoError(t, h.srv.Close(), "Close twice")
		require.NoError(t, h.store.Close())
		_, err = h.api.Snapshot(t.Context(), id)
		requireStoreFailed(t, err)
		_, err = h.api.Result(t.Context(), id)
		requireStoreFailed(t, err)
	})
	t.Run("store left open", func(t *testing.T) {
		clock := newFakeClock()
		mem := newMemory(t, clock, 4)
		h := newHarnessOn(t, mem, jobapi.Options{Model: model.Echo{}, Clock: clock}, nil)
		requireShutdownReturns(t, h.srv)
		require.NoError(t, h.srv.Close())
		id, _, err := mem.Submit(context.Background(), ledger.Submission{TaskID: "t"}, jobapi.Request{})
		require.NoError(t, err, "the caller's store is still open")
		_, err = mem.Fail(context.Background(), id, errDisk)
		require.NoError(t, err)
	})
}

// garbling is a memory store that keeps every result as bytes that are
// not JSON, as a store whose stored value no longer decodes hands back.
type garbling struct{ store }

func (g garbling) Finish(ctx context.Context, id string, _ json.RawMessage) (ledger.Snapshot, error) {
	return g.store.Finish(ctx, id, json.RawMessage("{not json"))
}

// TestResultNotJSONAnswered500 pins the answer to a stored result that
// does not marshal (a store given in Options.Ledger can hand one back):
// GET /jobs/{id}/result answered 500 "result is not JSON", where a stored
// value that no longer decodes is a store failure, 503 on every route. A
// Prefer: wait submit whose job ended DONE answers, as for any result it
// cannot read, the DONE snapshot without result.
func TestResultNotJSONAnswered500(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	logs := &logBuffer{}
	h := newHarnessOn(t, garbling{newMemory(t, clock, 16)}, jobapi.Options{Model: model.Echo{},
		Clock: clock, Logger: slog.New(slog.NewJSONHandler(logs, nil))}, nil)

	id := h.submit("t", nil)
	require.Equal(t, client.Done, h.waitBounded(id).State)
	_, err := h.api.Result(t.Context(), id)
	requireStoreFailed(t, err)
	require.Contains(t, logs.String(), `"msg":"job store failed"`)

	req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/jobs", strings.NewReader(`{"task_id":"w"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "wait=10")
	resp, err := h.ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", body)
	require.Equal(t, "DONE", body["state"])
	require.NotContains(t, body, "result")
	require.Contains(t, body, "completed_at", "the snapshot, not the result body")
}
