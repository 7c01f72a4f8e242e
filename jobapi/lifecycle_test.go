package jobapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// The admission contract: with every worker held by synchronous requests,
// K concurrent POSTs against async_max_queue M get exactly M 202s and K-M
// 429s.
func TestAdmissionUnderConcurrency(t *testing.T) {
	t.Parallel()
	const workers, M, K = 2, 5, 24
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.Workers = workers; c.AsyncMaxQueue = M })

	var syncs sync.WaitGroup
	for i := range workers {
		syncs.Go(func() {
			if _, err := h.api.Infer(t.Context(), client.Request{TaskID: "hold-" + strconv.Itoa(i)}); err != nil {
				t.Errorf("/infer: %v", err)
			}
		})
	}
	for range workers {
		<-g.started
	}

	type answer struct {
		id  string
		err error
	}
	answers := make(chan answer, K)
	var posts sync.WaitGroup
	for i := range K {
		posts.Go(func() {
			acc, err := h.api.Submit(t.Context(), client.Request{TaskID: "k-" + strconv.Itoa(i)})
			answers <- answer{acc.JobID, err}
		})
	}
	posts.Wait()
	close(answers)
	var admitted []string
	full := 0
	for a := range answers {
		switch {
		case a.err == nil:
			admitted = append(admitted, a.id)
		case errors.Is(a.err, client.ErrQueueFull):
			full++
		default:
			t.Fatalf("neither admitted nor refused as full: %v", a.err)
		}
	}
	require.Len(t, admitted, M)
	require.Equal(t, K-M, full)

	for range workers + M { // the held syncs, then every admitted job
		g.release <- struct{}{}
	}
	syncs.Wait()
	for _, id := range admitted {
		require.Equal(t, client.Done, h.waitDone(id).State)
	}
	require.Zero(t, h.metric("jobledger_queue_depth"))
	require.Equal(t, float64(M), h.metric("jobledger_jobs_submitted_total"))
	require.Equal(t, float64(K-M), h.metric("jobledger_jobs_rejected_total"))
}

// A job that passes its deadline ends TIMEOUT, running (its model's context
// is cancelled) or still pending (it never started). The running model
// holds its worker until released, so the pending job cannot start.
func TestTimeoutRunningAndPending(t *testing.T) {
	t.Parallel()
	g := newGate()
	g.ignoreCtx = true
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil)
	until(t, "both deadlines armed", func() bool { return h.clock.Pending() == 2 })
	h.clock.Advance(time.Second)

	r := h.waitDone(running)
	require.Equal(t, client.TimedOut, r.State)
	require.Equal(t, "deadline exceeded", r.Error)
	require.NotZero(t, r.StartedAt)

	p := h.waitDone(pending)
	require.Equal(t, client.TimedOut, p.State)
	require.Zero(t, p.StartedAt)
	require.NotZero(t, p.CompletedAt)

	g.release <- struct{}{}
	require.ErrorIs(t, <-g.ended, jobapi.ErrDeadline) // the model's context ended
}

// A model that ignores its context still times out on time; its worker
// stays taken until it returns.
func TestTimeoutOfModelIgnoringContext(t *testing.T) {
	t.Parallel()
	g := newGate()
	g.ignoreCtx = true
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
	id := h.submit("stuck", nil)
	<-g.started
	h.clock.Advance(time.Second)
	require.Equal(t, client.TimedOut, h.waitDone(id).State)
	g.release <- struct{}{}
}

func TestFailedOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("bad image", func(t *testing.T) {
		h := newHarness(t, nil, nil) // fingerprint
		acc, err := h.api.Submit(t.Context(), client.Request{Image: []byte("not an image")})
		require.NoError(t, err)
		done := h.waitDone(acc.JobID)
		require.Equal(t, client.Failed, done.State)
		require.Equal(t, "decode image: image: unknown format", done.Error)
	})
	t.Run("model error", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		id := h.submit("e", map[string]any{"fail": "out of cheese"})
		done := h.waitDone(id)
		require.Equal(t, client.Failed, done.State)
		require.Equal(t, "out of cheese", done.Error)
		_, err := h.api.Result(t.Context(), id)
		e := requireAPIError(t, err, http.StatusConflict, "job is not DONE")
		require.ErrorIs(t, err, client.ErrNotDone)
		require.Equal(t, client.Failed, e.State)
	})
	t.Run("panic", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		id := h.submit("p", map[string]any{"panic": "boom"})
		<-g.started
		g.release <- struct{}{}
		done := h.waitDone(id)
		require.Equal(t, client.Failed, done.State)
		require.Equal(t, "model panicked: boom", done.Error)
		// The server goes on serving.
		next := h.submit("after", nil)
		<-g.started
		g.release <- struct{}{}
		require.Equal(t, client.Done, h.waitDone(next).State)
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil)

	s, err := h.api.Cancel(t.Context(), pending)
	require.NoError(t, err)
	require.Equal(t, client.Failed, s.State)
	require.Equal(t, "canceled", s.Error)
	require.Zero(t, s.StartedAt)

	s, err = h.api.Cancel(t.Context(), running)
	require.NoError(t, err)
	require.Equal(t, client.Failed, s.State)
	require.Equal(t, "canceled", s.Error)
	require.ErrorIs(t, <-g.ended, jobapi.ErrCanceled) // the model's context ended

	_, err = h.api.Cancel(t.Context(), running)
	again := requireAPIError(t, err, http.StatusConflict, "job is already terminal")
	require.ErrorIs(t, err, client.ErrTerminal)
	require.Equal(t, client.Failed, again.State)
	require.Equal(t, running, again.JobID)

	// The worker is free again.
	next := h.submit("next", nil)
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(next).State)
}

func TestEvictionSeenThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) {
		c.Model = "echo"
		c.AsyncMaxCompleted = 1
		c.AsyncJobTTL = time.Minute
	})
	first := h.submit("1", nil)
	h.waitDone(first)
	second := h.submit("2", nil)
	h.waitDone(second)
	third := h.submit("3", nil) // evicts first: only one finished job is kept
	_, err := h.api.Snapshot(t.Context(), first)
	requireAPIError(t, err, http.StatusNotFound, "no such job")
	require.ErrorIs(t, err, client.ErrNotFound)
	_, err = h.api.Result(t.Context(), first)
	requireAPIError(t, err, http.StatusNotFound, "no such job")
	_, err = h.api.Result(t.Context(), second)
	require.NoError(t, err)
	h.waitDone(third)

	h.clock.Advance(time.Minute) // third's TTL passes
	fourth := h.submit("4", nil)
	_, err = h.api.Snapshot(t.Context(), third)
	requireAPIError(t, err, http.StatusNotFound, "no such job")
	h.waitDone(fourth)
}

func TestShutdownEndsJobsInFlight(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil)
	type answer struct {
		s   client.Snapshot
		err error
	}
	waited := make(chan answer, 1)
	go func() {
		s, err := h.api.Wait(context.Background(), pending, -1) // the server's max_wait
		waited <- answer{s, err}
	}()
	until(t, "waiter blocked", func() bool { return jobapi.Waiting(h.srv) == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the grace period is already over
	require.ErrorIs(t, h.srv.Shutdown(ctx), context.Canceled)

	w := <-waited
	require.NoError(t, w.err)
	require.Equal(t, client.Failed, w.s.State)
	require.Equal(t, "server shutting down", w.s.Error)
	r := h.snapshot(running)
	require.Equal(t, client.Failed, r.State)
	require.Equal(t, "server shutting down", r.Error)
	require.ErrorIs(t, <-g.ended, jobapi.ErrShuttingDown)

	_, err := h.api.Submit(t.Context(), client.Request{})
	requireAPIError(t, err, http.StatusServiceUnavailable, "server shutting down")
	require.ErrorIs(t, err, client.ErrUnavailable)
	_, err = h.api.Infer(t.Context(), client.Request{})
	requireAPIError(t, err, http.StatusServiceUnavailable, "server shutting down")
	requireProblem(t, h.get("/healthz"), http.StatusServiceUnavailable, "server shutting down")
}

func TestShutdownLetsRunningJobsFinish(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	id := h.submit("graceful", nil)
	<-g.started
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Shutdown(context.Background()) }()
	until(t, "shutdown began", func() bool { return h.get("/healthz").Status == http.StatusServiceUnavailable })
	g.release <- struct{}{}
	require.NoError(t, <-errc)
	require.Equal(t, client.Done, h.snapshot(id).State)
}

func TestInferStatuses(t *testing.T) {
	t.Parallel()
	t.Run("200", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		res, err := h.api.Infer(t.Context(), client.Request{TaskID: "s", Params: json.RawMessage(`{"a":"b"}`)})
		require.NoError(t, err)
		require.Equal(t, "s", res.TaskID)
		require.JSONEq(t, `{"a":"b"}`, string(res.Result))
	})
	t.Run("422", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		_, err := h.api.Infer(t.Context(), client.Request{Params: json.RawMessage(`{"fail":"nope"}`)})
		e := requireAPIError(t, err, http.StatusUnprocessableEntity, "model failed")
		require.Equal(t, "nope", e.ModelError)
	})
	t.Run("500 on panic", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		got := make(chan error, 1)
		go func() {
			_, err := h.api.Infer(context.Background(), client.Request{Params: json.RawMessage(`{"panic":"boom"}`)})
			got <- err
		}()
		<-g.started
		g.release <- struct{}{}
		e := requireAPIError(t, <-got, http.StatusInternalServerError, "model panicked")
		require.Equal(t, "model panicked: boom", e.ModelError)
	})
	t.Run("504 and 503", func(t *testing.T) {
		g := newGate()
		g.ignoreCtx = true // the first model keeps the only worker past the deadline
		h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
		infer := func(taskID string) <-chan error {
			c := make(chan error, 1)
			go func() {
				_, err := h.api.Infer(context.Background(), client.Request{TaskID: taskID})
				c <- err
			}()
			return c
		}
		first := infer("runs")
		<-g.started
		second := infer("waits")
		until(t, "both deadlines armed", func() bool { return h.clock.Pending() == 2 })
		h.clock.Advance(time.Second)
		requireAPIError(t, <-first, http.StatusGatewayTimeout, "deadline exceeded")
		err := <-second
		requireAPIError(t, err, http.StatusServiceUnavailable, "no worker became free before the deadline")
		require.ErrorIs(t, err, client.ErrUnavailable)
		g.release <- struct{}{}
		require.ErrorIs(t, <-g.ended, jobapi.ErrDeadline)
	})
}
