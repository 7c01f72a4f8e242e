package jobapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// stalledBody is a request body whose first Read reports that the handler
// began reading it and then blocks until release is closed, as a slow
// upload does.
type stalledBody struct {
	reading chan struct{} // closed at the first Read
	release chan struct{}
	r       io.Reader
}

func (b *stalledBody) Read(p []byte) (int, error) {
	select {
	case <-b.reading:
	default:
		close(b.reading)
	}
	<-b.release
	return b.r.Read(p)
}

func (b *stalledBody) Close() error { return nil }

// TestSubmitUnboundedConcurrentBodies pins the bug where POST /jobs read
// any number of bodies at once before the queue check could answer 429, as
// /infer did before its budget. The bodies being read now share a byte
// budget of max(async_max_queue, 1) x max_body_bytes, taken before a body
// is read: with it taken by a slow upload, a further submission answers
// 503 with Retry-After and its body is never read. Once the upload is
// admitted, its share is free again.
func TestSubmitUnboundedConcurrentBodies(t *testing.T) {
	t.Parallel()
	const maxBody = 1024
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) {
		c.MaxBodyBytes = maxBody
		c.AsyncMaxQueue = 1 // a budget of one max_body_bytes
	})

	full := `{"task_id":"slow"}` + strings.Repeat(" ", maxBody-len(`{"task_id":"slow"}`))
	slow := &stalledBody{reading: make(chan struct{}), release: make(chan struct{}), r: strings.NewReader(full)}
	slowReq := httptest.NewRequest(http.MethodPost, "/jobs", nil)
	slowReq.Body, slowReq.ContentLength = slow, maxBody
	slowReq.Header.Set("Content-Type", "application/json")
	slowRec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.ServeHTTP(slowRec, slowReq)
	}()
	<-slow.reading // the slow upload holds the whole budget

	for _, length := range []int64{int64(len(`{}`)), -1} {
		wb := &watchedBody{r: strings.NewReader(`{}`)}
		req := httptest.NewRequest(http.MethodPost, "/jobs", nil)
		req.Body, req.ContentLength = wb, length
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		r := reply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
		require.NoError(t, json.Unmarshal(r.Raw, &r.Body), "%s", r.Raw)
		requireProblem(t, r, http.StatusServiceUnavailable, "too many job submissions in flight")
		require.Equal(t, "1", r.Header.Get("Retry-After"))
		require.False(t, wb.read.Load(), "the body of a refused submission was read (Content-Length %d)", length)
	}

	close(slow.release)
	<-done
	require.Equal(t, http.StatusAccepted, slowRec.Code, "%s", slowRec.Body)
	var accepted struct {
		JobID string `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal(slowRec.Body.Bytes(), &accepted))
	require.Equal(t, "slow", <-g.started)
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitBounded(accepted.JobID).State)

	// The budget is free again: the next submission is read and admitted.
	h.submit("next", nil)
	require.Equal(t, "next", <-g.started)
	g.release <- struct{}{}
}

// panickyValidator is a model whose ValidateRequest panics on the task id
// "panic", as a RequestValidator with a bug might.
type panickyValidator struct{}

func (panickyValidator) Run(context.Context, jobapi.Request) (any, error) { return "ok", nil }

func (panickyValidator) ValidateRequest(req jobapi.Request) error {
	if req.TaskID == "panic" {
		panic("validator bug")
	}
	return nil
}

// TestSubmitBudgetLeaksOnPanic pins the bug where POST /jobs gave its share
// of the byte budget back only on its normal returns: a panic in the
// parse, a RequestValidator or the admission kept it for ever, and once
// the panics had taken the whole budget every submission answered 503. A
// body of unknown length takes the whole budget of async_max_queue 1, so
// one panic was enough.
func TestSubmitBudgetLeaksOnPanic(t *testing.T) {
	t.Parallel()
	h := newHarness(t, panickyValidator{}, func(c *jobapi.Config) {
		c.MaxBodyBytes = 1024
		c.AsyncMaxQueue = 1
	})
	post := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
		req.ContentLength = -1 // unknown: the whole budget
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		return rec
	}
	require.PanicsWithValue(t, "validator bug", func() { post(`{"task_id":"panic"}`) })
	rec := post(`{"task_id":"after"}`)
	require.Equal(t, http.StatusAccepted, rec.Code, "the share of the request that panicked is free: %s", rec.Body)
}
