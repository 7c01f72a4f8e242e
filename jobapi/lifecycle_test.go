package jobapi_test

import (
	"context"
	"encoding/base64"
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
	const workers, M, K = 2, 5, 24
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.Workers = workers; c.AsyncMaxQueue = M })

	var syncs sync.WaitGroup
	for i := range workers {
		syncs.Go(func() {
			r := h.postJSON("/infer", map[string]any{"task_id": "hold-" + strconv.Itoa(i)})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
		})
	}
	for range workers {
		<-g.started
	}

	type answer struct {
		status int
		id     string
	}
	answers := make(chan answer, K)
	var posts sync.WaitGroup
	for i := range K {
		posts.Go(func() {
			r := h.postJSON("/jobs", map[string]any{"task_id": "k-" + strconv.Itoa(i)})
			id, _ := r.Body["job_id"].(string)
			answers <- answer{r.Status, id}
		})
	}
	posts.Wait()
	close(answers)
	count := map[int]int{}
	var admitted []string
	for a := range answers {
		count[a.status]++
		if a.id != "" {
			admitted = append(admitted, a.id)
		}
	}
	require.Equal(t, map[int]int{http.StatusAccepted: M, http.StatusTooManyRequests: K - M}, count)

	for range workers + M { // the held syncs, then every admitted job
		g.release <- struct{}{}
	}
	syncs.Wait()
	for _, id := range admitted {
		require.Equal(t, client.Done, h.waitDone(id).State)
	}
	m := string(h.get("/metrics").Raw)
	require.Contains(t, m, "jobledger_queue_depth 0")
	require.Contains(t, m, "jobledger_jobs_submitted_total 5")
	require.Contains(t, m, "jobledger_jobs_rejected_total 19")
}

// A job that passes its deadline ends TIMEOUT, running (its model's context
// is cancelled) or still pending (it never started). The running model
// holds its worker until released, so the pending job cannot start.
func TestTimeoutRunningAndPending(t *testing.T) {
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
	t.Run("bad image", func(t *testing.T) {
		h := newHarness(t, nil, nil) // fingerprint
		r := h.postJSON("/jobs", map[string]any{"image": base64.StdEncoding.EncodeToString([]byte("not an image"))})
		require.Equal(t, http.StatusAccepted, r.Status)
		done := h.waitDone(r.Body["job_id"].(string))
		require.Equal(t, client.Failed, done.State)
		require.Equal(t, "decode image: image: unknown format", done.Error)
	})
	t.Run("model error", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		id := h.submit("e", map[string]any{"fail": "out of cheese"})
		done := h.waitDone(id)
		require.Equal(t, client.Failed, done.State)
		require.Equal(t, "out of cheese", done.Error)
		requireProblem(t, h.get("/jobs/"+id+"/result"), http.StatusConflict, "job is not DONE")
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
	g := newGate()
	h := newHarness(t, g, nil)
	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil)

	r := h.postJSON("/jobs/"+pending+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "FAILED", r.Body["state"])
	require.Equal(t, "canceled", r.Body["error"])
	require.NotContains(t, r.Body, "started_at")

	r = h.postJSON("/jobs/"+running+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "FAILED", r.Body["state"])
	require.Equal(t, "canceled", r.Body["error"])
	require.ErrorIs(t, <-g.ended, jobapi.ErrCanceled) // the model's context ended

	again := h.postJSON("/jobs/"+running+"/cancel", nil)
	requireProblem(t, again, http.StatusConflict, "job is already terminal")
	require.Equal(t, "FAILED", again.Body["state"])

	// The worker is free again.
	next := h.submit("next", nil)
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(next).State)
}

func TestEvictionSeenThroughTheAPI(t *testing.T) {
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
	requireProblem(t, h.get("/jobs/"+first), http.StatusNotFound, "no such job")
	requireProblem(t, h.get("/jobs/"+first+"/result"), http.StatusNotFound, "no such job")
	require.Equal(t, http.StatusOK, h.get("/jobs/"+second+"/result").Status)
	h.waitDone(third)

	h.clock.Advance(time.Minute) // third's TTL passes
	fourth := h.submit("4", nil)
	requireProblem(t, h.get("/jobs/"+third), http.StatusNotFound, "no such job")
	h.waitDone(fourth)
}

func TestShutdownEndsJobsInFlight(t *testing.T) {
	g := newGate()
	h := newHarness(t, g, nil)
	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil)
	waited := make(chan reply, 1)
	go func() { waited <- h.get("/jobs/" + pending + "/wait") }()
	until(t, "waiter blocked", func() bool { return jobapi.Waiting(h.srv) == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the grace period is already over
	require.ErrorIs(t, h.srv.Shutdown(ctx), context.Canceled)

	w := <-waited
	require.Equal(t, "FAILED", w.Body["state"])
	require.Equal(t, "server shutting down", w.Body["error"])
	r := h.get("/jobs/" + running)
	require.Equal(t, "FAILED", r.Body["state"])
	require.Equal(t, "server shutting down", r.Body["error"])
	require.ErrorIs(t, <-g.ended, jobapi.ErrShuttingDown)

	requireProblem(t, h.postJSON("/jobs", map[string]any{}), http.StatusServiceUnavailable, "server shutting down")
	requireProblem(t, h.postJSON("/infer", map[string]any{}), http.StatusServiceUnavailable, "server shutting down")
	requireProblem(t, h.get("/healthz"), http.StatusServiceUnavailable, "server shutting down")
}

func TestShutdownLetsRunningJobsFinish(t *testing.T) {
	g := newGate()
	h := newHarness(t, g, nil)
	id := h.submit("graceful", nil)
	<-g.started
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Shutdown(context.Background()) }()
	until(t, "shutdown began", func() bool { return h.get("/healthz").Status == http.StatusServiceUnavailable })
	g.release <- struct{}{}
	require.NoError(t, <-errc)
	require.Equal(t, "DONE", h.get("/jobs/" + id).Body["state"])
}

func TestInferStatuses(t *testing.T) {
	t.Run("200", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		r := h.postJSON("/infer", map[string]any{"task_id": "s", "params": map[string]any{"a": "b"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
		require.Equal(t, map[string]any{"task_id": "s", "result": map[string]any{"a": "b"}}, r.Body)
	})
	t.Run("422", func(t *testing.T) {
		h := newHarness(t, nil, echoConfig)
		r := h.postJSON("/infer", map[string]any{"params": map[string]any{"fail": "nope"}})
		requireProblem(t, r, http.StatusUnprocessableEntity, "model failed")
		require.Equal(t, "nope", r.Body["error"])
	})
	t.Run("500 on panic", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, nil)
		got := make(chan reply, 1)
		go func() { got <- h.postJSON("/infer", map[string]any{"params": map[string]any{"panic": "boom"}}) }()
		<-g.started
		g.release <- struct{}{}
		r := <-got
		requireProblem(t, r, http.StatusInternalServerError, "model panicked")
		require.Equal(t, "model panicked: boom", r.Body["error"])
	})
	t.Run("504 and 503", func(t *testing.T) {
		g := newGate()
		g.ignoreCtx = true // the first model keeps the only worker past the deadline
		h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
		first := make(chan reply, 1)
		go func() { first <- h.postJSON("/infer", map[string]any{"task_id": "runs"}) }()
		<-g.started
		second := make(chan reply, 1)
		go func() { second <- h.postJSON("/infer", map[string]any{"task_id": "waits"}) }()
		until(t, "both deadlines armed", func() bool { return h.clock.Pending() == 2 })
		h.clock.Advance(time.Second)
		requireProblem(t, <-first, http.StatusGatewayTimeout, "deadline exceeded")
		requireProblem(t, <-second, http.StatusServiceUnavailable, "no worker became free before the deadline")
		g.release <- struct{}{}
		require.ErrorIs(t, <-g.ended, jobapi.ErrDeadline)
	})
}
