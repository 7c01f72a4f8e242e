package jobapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// postJobDirect serves POST /jobs on srv's handler in the calling goroutine,
// so that a panic in the handler reaches the caller rather than net/http's
// per-request recovery.
func postJobDirect(srv *jobapi.Server) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(`{"task_id":"t"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	return rec
}

// requireShutdownReturns asserts that Shutdown, given a generous grace
// period, returns nil: every unit of work it waits for ended. The wall-clock
// bound only stops a broken server from hanging the test run.
func requireShutdownReturns(t *testing.T, srv *jobapi.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	select {
	case err := <-done:
		require.NoError(t, err, "Shutdown waited out its grace period")
	case <-time.After(10 * time.Second): // twice the grace period
		t.Fatal("Shutdown hangs: it waits for a runner that never started")
	}
}

// panicClock is a fakeClock whose Now panics while broken is set.
type panicClock struct {
	*fakeClock
	broken atomic.Bool
}

func (c *panicClock) Now() time.Time {
	if c.broken.Load() {
		panic("clock broken")
	}
	return c.fakeClock.Now()
}

// TestShutdownAfterPanicInSubmit pins the hang of Shutdown after a panic in
// the ledger's Submit: admit counted the job in the server's WaitGroup and
// then called Submit, and a panic there (an injected NewID repeating an id,
// an injected clock panicking) skipped the Done, so Shutdown waited forever
// for a runner that never started. The panic is programmer misuse and still
// reaches the caller; it no longer leaves the count behind.
func TestShutdownAfterPanicInSubmit(t *testing.T) {
	t.Parallel()
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	cfg.Model = "echo"
	discard := slog.New(slog.DiscardHandler)

	t.Run("repeated id", func(t *testing.T) {
		clock := newFakeClock()
		l, _ := openStore(t, "memory", "", cfg, clock, func() string { return "same" })
		srv, err := jobapi.New(l, cfg, jobapi.Options{Clock: clock, Logger: discard, LedgerJobTTL: cfg.AsyncJobTTL})
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, postJobDirect(srv).Code)
		require.PanicsWithValue(t, `jobtable: Config.NewID returned duplicate id "same"`,
			func() { postJobDirect(srv) }, "the panic is not swallowed")
		requireShutdownReturns(t, srv)
		require.NoError(t, srv.CheckInvariants())
	})

	t.Run("panicking clock", func(t *testing.T) {
		clock := &panicClock{fakeClock: newFakeClock()}
		srv, err := jobapi.New(memoryStore(t, cfg, clock), cfg, jobapi.Options{Clock: clock, Logger: discard, LedgerJobTTL: cfg.AsyncJobTTL})
		require.NoError(t, err)
		clock.broken.Store(true)
		require.PanicsWithValue(t, "clock broken", func() { postJobDirect(srv) }, "the panic is not swallowed")
		clock.broken.Store(false)
		require.NoError(t, srv.CheckInvariants(), "the ledger undid the admission")
		requireShutdownReturns(t, srv)
		require.NoError(t, srv.CheckInvariants())
		require.Zero(t, clock.Pending())
	})
}

// endHook is a slog.Handler that calls onEnd with the job id of every
// "job ended" line the server logs, on the goroutine that logs it.
type endHook struct{ onEnd func(id string) }

func (h endHook) Enabled(context.Context, slog.Level) bool { return true }
func (h endHook) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h endHook) WithGroup(string) slog.Handler            { return h }

func (h endHook) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "job ended" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "job_id" {
			h.onEnd(a.Value.String())
			return false
		}
		return true
	})
	return nil
}

// TestCancelAnswersFromItsOwnSnapshot pins a 404 for a cancel that
// succeeded: the handler ended the job, then looked it up again for its
// reply, and a Submit that evicted the job in between (its TTL passed, or
// MaxCompleted was reached) turned the reply into 404. The handler now
// answers with the snapshot the ledger's transition returned.
//
// The eviction is put exactly between the transition and the reply: the
// server logs "job ended" after the transition and before the handler
// writes, and the test's log handler then moves the clock past the TTL and
// submits a job, which evicts the cancelled one.
func TestCancelAnswersFromItsOwnSnapshot(t *testing.T) {
	t.Parallel()
	g := newGate()
	clock := newFakeClock()
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	cfg.AsyncJobTTL = time.Second

	var (
		target    atomic.Value // the id of the job to evict once it ends
		once      sync.Once
		srv       *jobapi.Server
		submitted = make(chan int, 1)
	)
	target.Store("")
	hook := endHook{onEnd: func(id string) {
		if id != target.Load().(string) {
			return
		}
		once.Do(func() {
			clock.Advance(cfg.AsyncJobTTL)
			submitted <- postJobDirect(srv).Code // evicts the job that just ended
		})
	}}
	srv, err := jobapi.New(memoryStore(t, cfg, clock), cfg, jobapi.Options{Model: g, Clock: clock, Logger: slog.New(hook), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	h := &harness{t: t, srv: srv, ts: ts, api: newClient(t, ts), clock: clock}
	t.Cleanup(func() {
		checkDrained(t, srv, clock)
		ts.Close()
	})

	id := h.submit("doomed", nil)
	<-g.started
	target.Store(id)

	s, err := h.api.Cancel(t.Context(), id)
	require.Equal(t, http.StatusAccepted, <-submitted, "the eviction ran between the transition and the reply")
	require.NoError(t, err)
	require.Equal(t, id, s.JobID)
	require.Equal(t, "doomed", s.TaskID)
	require.Equal(t, client.Failed, s.State)
	require.Equal(t, "canceled", s.Error)
	require.NotZero(t, s.CompletedAt)

	_, err = h.api.Snapshot(t.Context(), id)
	requireAPIError(t, err, http.StatusNotFound, "no such job")
}
