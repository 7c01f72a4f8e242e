package jobapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// watchedBody is a request body that records whether it was read.
type watchedBody struct {
	r    io.Reader
	read atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

func (b *watchedBody) Close() error { return nil }

// inferDirect calls the handler with a body of the given declared length
// (-1: unknown, as for a chunked upload) and returns the reply and whether
// the body was read.
func inferDirect(h *harness, body string, length int64) (*httptest.ResponseRecorder, bool) {
	wb := &watchedBody{r: strings.NewReader(body)}
	req := httptest.NewRequest(http.MethodPost, "/infer", nil)
	req.Body, req.ContentLength = wb, length
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	return rec, wb.read.Load()
}

// TestInferUnboundedConcurrentBodies pins the bug where /infer read every
// body before waiting for a worker, with no bound on how many at once: 150
// concurrent 8 MB requests held 2.8 GB, and /metrics timed out for 15 s.
// The bodies in flight are now bounded by a byte budget of workers x
// max_body_bytes, taken before the body is read: with it full, /infer
// answers 503 with Retry-After and never reads the body. Small bodies still
// queue for a worker.
func TestInferUnboundedConcurrentBodies(t *testing.T) {
	t.Parallel()
	const maxBody = 1024
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.MaxBodyBytes = maxBody }) // one worker: a budget of 1024 bytes

	// A body of exactly max_body_bytes takes the whole budget while its
	// model runs.
	full := `{"task_id":"full"}` + strings.Repeat(" ", maxBody-len(`{"task_id":"full"}`))
	got := make(chan reply, 1)
	go func() { got <- h.do(http.MethodPost, "/infer", "application/json", []byte(full)) }()
	require.Equal(t, "full", <-g.started)

	for _, length := range []int64{int64(len(`{}`)), -1, 1 << 40} {
		rec, read := inferDirect(h, `{}`, length)
		r := reply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
		require.NoError(t, json.Unmarshal(r.Raw, &r.Body), "%s", r.Raw)
		requireProblem(t, r, http.StatusServiceUnavailable, "too many /infer requests in flight")
		require.Equal(t, "1", r.Header.Get("Retry-After"))
		require.False(t, read, "the body of a refused request was read (Content-Length %d)", length)
	}

	g.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-got).Status)

	// The budget is back. Two small bodies fit in it at once: the second
	// is read and waits for the one worker rather than being refused.
	first := make(chan reply, 1)
	go func() { first <- h.postJSON("/infer", map[string]any{"task_id": "a"}) }()
	require.Equal(t, "a", <-g.started)
	second := make(chan *httptest.ResponseRecorder, 1)
	secondRead := make(chan bool, 1)
	go func() {
		rec, read := inferDirect(h, `{"task_id":"b"}`, int64(len(`{"task_id":"b"}`)))
		second <- rec
		secondRead <- read
	}()
	g.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-first).Status)
	require.Equal(t, "b", <-g.started)
	g.release <- struct{}{}
	require.Equal(t, http.StatusOK, (<-second).Code)
	require.True(t, <-secondRead)
}

// TestInferDeadlineFromReceipt pins where /infer's deadline starts, which
// docs/http.md once placed at the request's receipt: it is armed once the
// body has been read and parsed, the point that corresponds to a job's
// admission, so time spent reading a slow body (bounded by read_timeout)
// does not count against async_timeout.
func TestInferDeadlineFromReceipt(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
	body := `{"task_id":"slow upload"}`
	slow := &stalledBody{reading: make(chan struct{}), release: make(chan struct{}), r: strings.NewReader(body)}
	req := httptest.NewRequest(http.MethodPost, "/infer", nil)
	req.Body, req.ContentLength = slow, int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.ServeHTTP(rec, req)
	}()
	<-slow.reading
	h.clock.Advance(2 * time.Second) // past async_timeout, while the body is being read
	close(slow.release)
	select {
	case task := <-g.started:
		require.Equal(t, "slow upload", task)
		g.release <- struct{}{}
		<-done
	case <-done: // answered without running the model
	}
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
}
