package jobapi_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/model"
)

// advanceRetries moves clock through the pauses before retries from to
// to-1 of a write st failed, each once it is armed; the job must stay live
// meanwhile, not be given up.
func advanceRetries(t *testing.T, clock *fakeClock, st *failing, from, to int) {
	t.Helper()
	for n := from; n < to; n++ {
		until(t, "a retry armed, or the job ended", func() bool {
			return clock.PendingIn(jobapi.RetryBackoff(n)) == 1 || st.Stats().Depth == 0
		})
		require.Equal(t, 1, st.Stats().Depth, "the job ended before retry %d", n+1)
		clock.Advance(jobapi.RetryBackoff(n))
	}
}

// TestRefusedEndIsRetried pins the wedge of a brief full disk: the runner
// gave up on an end the store failed, so the job stayed RUNNING past its
// deadline, holding its place in the queue, and every later submit got
// 429 until a restart. The end is now tried again, by the server's clock,
// until it commits: the job ends once, with its model's result, and
// admission comes back by itself. While the writes fail, /healthz and the
// metrics say so.
func TestRefusedEndIsRetried(t *testing.T) {
	t.Parallel()
	const refusals = 4
	clock := newFakeClock()
	st := newFailingQueue(t, clock, 1)
	g := newGate()
	logs := &logBuffer{}
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}, nil)
	require.Equal(t, map[string]any{"status": "ok"}, h.get("/healthz").Body)

	st.failNext("Finish", refusals)
	first := clock.Now()
	id := h.submit("t", nil)
	require.Equal(t, "t", <-g.started)
	g.release <- struct{}{}
	advanceRetries(t, clock, st, 0, 1)

	r := h.get("/healthz")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "degraded", r.Body["status"])
	require.Equal(t, "writes failing since "+first.UTC().Format(time.RFC3339)+": disk I/O error", r.Body["store"])
	require.Equal(t, 1.0, h.metric("jobledger_store_writes_failing"))
	require.Equal(t, client.Running, h.snapshot(id).State)
	_, err := h.api.Submit(t.Context(), client.Request{TaskID: "full"})
	requireAPIError(t, err, http.StatusTooManyRequests, "job queue is full")
	require.ErrorIs(t, err, client.ErrQueueFull)

	advanceRetries(t, clock, st, 1, refusals)
	s := h.waitBounded(id)
	require.Equal(t, client.Done, s.State, "%+v", s)
	res, err := h.api.Result(t.Context(), id)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":"t"}`, string(res.Result), "the model's result")
	until(t, "the end logged", func() bool { return strings.Contains(logs.String(), `"msg":"job ended"`) })
	require.Equal(t, 1, strings.Count(logs.String(), `"msg":"job ended"`), "ended once")
	require.Equal(t, 1.0, h.metric(`jobledger_jobs_completed_total{state="DONE"}`))
	require.Equal(t, 0.0, h.metric(`jobledger_jobs_completed_total{state="FAILED"}`))
	require.NotContains(t, logs.String(), "job left live")

	require.Equal(t, map[string]any{"status": "ok"}, h.get("/healthz").Body)
	require.Equal(t, 0.0, h.metric("jobledger_store_writes_failing"))
	require.Equal(t, 4.0, h.metric("jobledger_store_write_failures_total"))
	next := h.submit("next", nil)
	require.Equal(t, "next", <-g.started, "admission came back by itself")
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitBounded(next).State)
}

// TestRefusedStartIsRetried: a job whose start the store fails stays
// PENDING, its runner trying again, and starts once the store takes
// writes; one whose deadline passes meanwhile ends TIMEOUT once the store
// takes its end, rather than stay PENDING with nobody to end it.
func TestRefusedStartIsRetried(t *testing.T) {
	t.Parallel()
	t.Run("started", func(t *testing.T) {
		clock := newFakeClock()
		st := newFailingQueue(t, clock, 1)
		h := newHarnessOn(t, st, jobapi.Options{Model: model.Echo{}, Clock: clock}, nil)
		st.failNext("Start", 2)
		id := h.submit("t", nil)
		advanceRetries(t, clock, st, 0, 2)
		require.Equal(t, client.Done, h.waitBounded(id).State)
		require.Equal(t, 2.0, h.metric("jobledger_store_write_failures_total"))
		require.Equal(t, client.Done, h.waitBounded(h.submit("next", nil)).State)
	})
	t.Run("past its deadline", func(t *testing.T) {
		clock := newFakeClock()
		st := newFailingQueue(t, clock, 1)
		h := newHarnessOn(t, st, jobapi.Options{Model: model.Echo{}, Clock: clock},
			func(c *jobapi.Config) { c.AsyncTimeout = 2 * time.Second })
		st.failNext("Start", -1)
		st.failNext("Timeout", -1)
		id := h.submit("t", nil)
		advanceRetries(t, clock, st, 0, 5) // 50+100+200+400+800 ms
		require.Equal(t, client.Pending, h.snapshot(id).State)
		until(t, "a retry armed", func() bool { return clock.PendingIn(jobapi.RetryBackoff(5)) == 1 })
		clock.Advance(time.Second) // past the deadline: the start's retry stops, the TIMEOUT is refused
		advanceRetries(t, clock, st, 0, 2)
		until(t, "a retry armed", func() bool { return clock.PendingIn(jobapi.RetryBackoff(2)) == 1 })
		require.Equal(t, client.Pending, h.snapshot(id).State)
		st.failNext("Timeout", 0)
		clock.Advance(jobapi.RetryBackoff(2))
		r := h.waitBounded(id)
		require.Equal(t, client.TimedOut, r.State, "%+v", r)
		until(t, "the commit reported", func() bool { return h.get("/healthz").Body["status"] == "ok" })
		st.failNext("Start", 0)
		require.Equal(t, client.Done, h.waitBounded(h.submit("next", nil)).State)
	})
}

// TestStoreHealthRedactsPasswords: /healthz, which answers without a
// token, and the console's overview say why the store's writes fail, but
// never a password the store's error quotes.
func TestStoreHealthRedactsPasswords(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	st := newFailingQueue(t, clock, 1)
	st.err = errors.New(`dial postgres://jobs:s3cret@db.internal/jobs: connection refused`)
	g := newGate()
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock}, nil)
	st.failNext("Finish", 2)
	id := h.submit("t", nil)
	require.Equal(t, "t", <-g.started)
	g.release <- struct{}{}
	advanceRetries(t, clock, st, 0, 1)

	health, _ := h.get("/healthz").Body["store"].(string)
	overview := h.srv.Overview().StoreError
	advanceRetries(t, clock, st, 1, 2) // the job ends before any assertion can stop the test
	require.Equal(t, client.Done, h.waitBounded(id).State)

	require.Contains(t, health, "postgres://jobs:xxxxx@db.internal/jobs: connection refused")
	require.NotContains(t, health, "s3cret")
	require.Equal(t, health, overview)
}
