package jobapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// heldWriter is a ResponseWriter whose first Write says so on started and
// then waits for finish, and then succeeds, fails (a client gone) or
// panics, as how says.
type heldWriter struct {
	h       http.Header
	started chan struct{}
	finish  chan struct{}
	how     string // "ok", "fail" or "panic"
	wrote   bool
}

func newHeldWriter(how string) *heldWriter {
	return &heldWriter{h: http.Header{}, started: make(chan struct{}), finish: make(chan struct{}), how: how}
}

func (w *heldWriter) Header() http.Header { return w.h }
func (w *heldWriter) WriteHeader(int)     {}

func (w *heldWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		close(w.started)
		<-w.finish
	}
	switch w.how {
	case "fail":
		return 0, errors.New("connection reset by peer")
	case "panic":
		panic("the writer broke")
	}
	return len(p), nil
}

// holdResult starts GET target on h's server with a heldWriter, waits
// until its reply is being written, and returns a function that lets the
// write end and waits for the handler to return; the test's cleanup calls
// it too, should the test end first.
func holdResult(t *testing.T, h *harness, target, how string) func() {
	t.Helper()
	w := newHeldWriter(how)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }() // the "panic" writer's panic, as net/http would
		h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	}()
	select {
	case <-w.started:
	case <-done:
		t.Fatal("the reply was not written")
	}
	var once sync.Once
	finish := func() {
		once.Do(func() {
			close(w.finish)
			<-done
		})
	}
	t.Cleanup(finish)
	return finish
}

// budgetConfig sets a reply budget of 8 KiB on the echo model.
func budgetConfig(c *jobapi.Config) {
	c.Model = "echo"
	c.MaxReplyBytesInFlight = 8 << 10
}

// TestResultReplyBudget pins the bug where result replies had no memory
// budget, so that slow readers of a large result grew the process without
// bound: while one reply of a 3 KB result is being written, its share of
// an 8 KiB budget (the result, its encoding and an envelope) leaves no room
// for a second, which is answered 503 with Retry-After; the share is given
// back however the reply ends, written, cut off by a client gone or by a
// panic, so that the next reply fits again.
func TestResultReplyBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, budgetConfig)
	id := h.submit("big", map[string]any{"pad": strings.Repeat("x", 3000)})
	h.waitDone(id)
	target := "/jobs/" + id + "/result"
	_, err := h.api.Result(t.Context(), id)
	require.NoError(t, err)
	for _, how := range []string{"ok", "fail", "panic"} {
		t.Run(how, func(t *testing.T) {
			finish := holdResult(t, h, target, how)
			_, err := h.api.Result(t.Context(), id)
			e := requireAPIError(t, err, http.StatusServiceUnavailable, "too many result bytes in flight")
			require.ErrorIs(t, err, client.ErrUnavailable)
			require.Equal(t, time.Second, e.RetryAfter)
			small := h.submit("small", nil)
			h.waitDone(small)
			_, err = h.api.Result(t.Context(), small)
			require.NoError(t, err, "a small result still fits")
			finish()
			res, err := h.api.Result(t.Context(), id)
			require.NoError(t, err)
			var got struct{ Pad string }
			require.NoError(t, json.Unmarshal(res.Result, &got))
			require.Len(t, got.Pad, 3000)
		})
	}
}

// TestResultLargerThanBudget: a result larger than the whole budget takes
// all of it and is still answered, alone.
func TestResultLargerThanBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, budgetConfig)
	id := h.submit("huge", map[string]any{"pad": strings.Repeat("x", 20000)})
	h.waitDone(id)
	_, err := h.api.Result(t.Context(), id)
	require.NoError(t, err)
	finish := holdResult(t, h, "/jobs/"+id+"/result", "ok")
	small := h.submit("small", nil)
	h.waitDone(small)
	_, err = h.api.Result(t.Context(), small)
	requireAPIError(t, err, http.StatusServiceUnavailable, "too many result bytes in flight")
	finish()
	_, err = h.api.Result(t.Context(), small)
	require.NoError(t, err)
}

// TestPreferWaitReplyOverBudget: a Prefer: wait submit whose job ends DONE
// while the reply budget cannot spare its result's share is answered with
// the DONE snapshot, without the result, which GET /jobs/{id}/result reads
// later: the outcome is known, and a 503 would deny the admission.
func TestPreferWaitReplyOverBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, budgetConfig)
	id := h.submit("big", map[string]any{"pad": strings.Repeat("x", 3000)})
	h.waitDone(id)
	finish := holdResult(t, h, "/jobs/"+id+"/result", "ok")
	out, err := h.api.SubmitWait(t.Context(), client.Request{Params: params(t, map[string]any{"pad": strings.Repeat("y", 3000)})}, 5*time.Second)
	require.NoError(t, err)
	require.Nil(t, out.Result, "no result")
	require.NotNil(t, out.Snapshot, "the DONE snapshot")
	require.Equal(t, client.Done, out.Snapshot.State)
	finish()
	_, err = h.api.Result(t.Context(), out.JobID)
	require.NoError(t, err, "the result is read later")
}

// TestResultReplyShareCountsEscapes: a stored result whose encoding is
// longer than itself (a store given in Options.Ledger may hold raw <, >
// and &, each written as six bytes) takes a share of its encoded length:
// while its reply is being written, no other fits in the budget.
func TestResultReplyShareCountsEscapes(t *testing.T) {
	t.Parallel()
	l, err := ledger.NewMemory[jobapi.Request, json.RawMessage](ledger.Config{MaxQueue: 4})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	ctx := context.Background()
	finished := func(res string) string {
		id, _, err := l.Submit(ctx, ledger.Submission{}, jobapi.Request{})
		require.NoError(t, err)
		_, err = l.Start(ctx, id)
		require.NoError(t, err)
		_, err = l.Finish(ctx, id, json.RawMessage(res))
		require.NoError(t, err)
		return id
	}
	escaped := finished(`"` + strings.Repeat("<", 1000) + `"`) // 1 KB stored, 6 KB encoded
	small := finished(`{}`)
	h := newHarnessOn(t, l, jobapi.Options{}, budgetConfig)
	finish := holdResult(t, h, "/jobs/"+escaped+"/result", "ok")
	_, err = h.api.Result(t.Context(), small)
	requireAPIError(t, err, http.StatusServiceUnavailable, "too many result bytes in flight")
	finish()
	res, err := h.api.Result(t.Context(), escaped)
	require.NoError(t, err)
	var got string
	require.NoError(t, json.Unmarshal(res.Result, &got))
	require.Equal(t, strings.Repeat("<", 1000), got)
	_, err = h.api.Result(t.Context(), small)
	require.NoError(t, err)
}
