package jobapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestMain checks for leaked goroutines; the tests on the PostgreSQL store
// get their server from package pgtest.
func TestMain(m *testing.M) { pgtest.Main(m) }

// fakeClock is a Clock moved by hand: AfterFunc callbacks run inside
// Advance, on the test's goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[int]*fakeTimer
	next   int
	// fireNext makes the next AfterFunc run its callback at once, before
	// it returns (see fireNextTimer).
	fireNext bool
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), timers: map[int]*fakeTimer{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	if c.fireNext {
		c.fireNext = false
		c.mu.Unlock()
		f()
		return func() bool { return false }
	}
	defer c.mu.Unlock()
	id := c.next
	c.next++
	c.timers[id] = &fakeTimer{at: c.now.Add(d), f: f}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.timers[id]
		delete(c.timers, id)
		return ok
	}
}

// fireNextTimer makes the next AfterFunc call its callback before it
// returns: a timer of the real clock may fire before time.AfterFunc's
// caller has gone on, and code that arms one must be ready for that.
func (c *fakeClock) fireNextTimer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fireNext = true
}

// Pending returns the number of timers not yet fired or stopped.
func (c *fakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// PendingIn returns the number of timers not yet fired or stopped that
// are due exactly d from now.
func (c *fakeClock) PendingIn(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.at.Equal(c.now.Add(d)) {
			n++
		}
	}
	return n
}

// Advance moves the clock by d and runs the callbacks now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for id, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t.f)
			delete(c.timers, id)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// gateModel blocks each run until the test lets it go. Params select the
// outcome once released: {"fail": "msg"} or {"panic": "msg"}.
type gateModel struct {
	started chan string   // receives each run's task id as it starts
	release chan struct{} // one receive lets one run finish
	// ignoreCtx makes runs wait for release even after their context ends.
	ignoreCtx bool
	ended     chan error // receives context.Cause when a run's context ended
}

func newGate() *gateModel {
	return &gateModel{started: make(chan string, 64), release: make(chan struct{}), ended: make(chan error, 64)}
}

func (g *gateModel) Run(ctx context.Context, req jobapi.Request) (any, error) {
	g.started <- req.TaskID
	if g.ignoreCtx {
		<-g.release
		if ctx.Err() != nil {
			g.ended <- context.Cause(ctx)
		}
	} else {
		select {
		case <-g.release:
		case <-ctx.Done():
			g.ended <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		}
	}
	var p struct{ Fail, Panic string }
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	switch {
	case p.Panic != "":
		panic(p.Panic)
	case p.Fail != "":
		return nil, errors.New(p.Fail)
	}
	return map[string]string{"task": req.TaskID}, nil
}

// harness is one server behind a loopback httptest.Server, and the typed
// client that speaks to it.
type harness struct {
	t     *testing.T
	srv   *jobapi.Server
	ts    *httptest.Server
	api   *client.Client
	clock *fakeClock
	store ledger.Ledger[jobapi.Request, json.RawMessage]
}

// newClient is a typed client of the server behind ts.
func newClient(t testing.TB, ts *httptest.Server) *client.Client {
	t.Helper()
	c, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client()})
	require.NoError(t, err)
	return c
}

// newHarness starts a server with cfg changed by mutate and the given
// model (nil: the configured built-in). Cleanup shuts it down, checks it at
// quiescence (checkDrained) and closes the listener.
func newHarness(t *testing.T, model jobapi.Model, mutate func(*jobapi.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, jobapi.Options{Model: model}, mutate)
}

// newHarnessWith is newHarness with opts, on a memory store; the harness
// fills in a fake clock and a silent logger where opts leaves them nil.
func newHarnessWith(t *testing.T, opts jobapi.Options, mutate func(*jobapi.Config)) *harness {
	t.Helper()
	return newHarnessStore(t, "memory", "", opts, mutate)
}

// newHarnessStore is newHarnessWith on the store that store names, as
// cmd/jobserver reads its key "store", under replica (PostgreSQL only).
func newHarnessStore(t *testing.T, store, replica string, opts jobapi.Options, mutate func(*jobapi.Config)) *harness {
	t.Helper()
	cfg, clock := harnessConfig(t, &opts, mutate)
	l, durable := openStore(t, store, replica, cfg, clock, nil)
	opts.Durable = durable
	if opts.LedgerJobTTL == 0 {
		opts.LedgerJobTTL = cfg.AsyncJobTTL
	}
	return startHarness(t, l, cfg, opts, clock)
}

// newHarnessOn is newHarnessWith on the store l, the caller's to close.
func newHarnessOn(t *testing.T, l ledger.Ledger[jobapi.Request, json.RawMessage], opts jobapi.Options, mutate func(*jobapi.Config)) *harness {
	t.Helper()
	cfg, clock := harnessConfig(t, &opts, mutate)
	return startHarness(t, l, cfg, opts, clock)
}

// harnessDefaults is the harness's config before a test changes it.
func harnessDefaults() jobapi.Config {
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	return cfg
}

// harnessConfig is the harness's config changed by mutate, with opts'
// clock (a fresh fake one if nil) and logger (a silent one if nil).
func harnessConfig(t *testing.T, opts *jobapi.Options, mutate func(*jobapi.Config)) (jobapi.Config, *fakeClock) {
	t.Helper()
	cfg := harnessDefaults()
	if mutate != nil {
		mutate(&cfg)
	}
	clock, ok := opts.Clock.(*fakeClock)
	if !ok {
		require.Nil(t, opts.Clock, "the harness drives a *fakeClock")
		clock = newFakeClock()
		opts.Clock = clock
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, clock
}

func startHarness(t *testing.T, l ledger.Ledger[jobapi.Request, json.RawMessage], cfg jobapi.Config, opts jobapi.Options, clock *fakeClock) *harness {
	t.Helper()
	srv, err := jobapi.New(l, cfg, opts)
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	h := &harness{t: t, srv: srv, ts: ts, api: newClient(t, ts), clock: clock, store: l}
	t.Cleanup(func() {
		checkDrained(t, srv, clock)
		ts.Close()
	})
	return h
}

// memoryStore is a memory store with cfg's limits on clock's time (nil:
// the wall clock), closed by the test's cleanup.
func memoryStore(tb testing.TB, cfg jobapi.Config, clock jobapi.Clock) ledger.Ledger[jobapi.Request, json.RawMessage] {
	tb.Helper()
	l, _ := openStore(tb, "memory", "", cfg, clock, nil)
	return l
}

// openStore opens the store that store names, as cmd/jobserver reads its
// key "store" (memory, sqlite:PATH, a PostgreSQL URL), with cfg's limits,
// on clock's time (nil: the store's own clock), under replica (PostgreSQL
// only), with newID (nil: the store's ids). It says whether the store
// keeps its jobs across a restart. The test's cleanup closes it, after
// the cleanups registered later (a harness's).
func openStore(tb testing.TB, store, replica string, cfg jobapi.Config, clock jobapi.Clock, newID func() string) (ledger.Ledger[jobapi.Request, json.RawMessage], bool) {
	tb.Helper()
	lcfg := cfg.LedgerConfig()
	lcfg.NewID = newID
	if clock != nil {
		lcfg.Now = clock.Now
	}
	var (
		l       ledger.Ledger[jobapi.Request, json.RawMessage]
		durable = true
	)
	switch path, isSQLite := strings.CutPrefix(store, "sqlite:"); {
	case store == "memory":
		m, err := ledger.NewMemory[jobapi.Request, json.RawMessage](lcfg)
		require.NoError(tb, err)
		l, durable = m, false
	case isSQLite:
		st, err := sqlite.Open(context.Background(), path, lcfg, sqlite.Options{})
		require.NoError(tb, err)
		l = ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{})
	default:
		st, err := postgres.Open(context.Background(), store, lcfg, postgres.Options{Replica: replica, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(tb, err)
		l = ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{})
	}
	tb.Cleanup(func() { require.NoError(tb, l.Close()) })
	return l, durable
}

// checkDrained shuts srv down with no grace (what is left ends FAILED) and,
// once every runner and handler has returned, checks the server's
// invariants, whose drained clauses see a leaked flight or timer, and that
// clock (nil: the wall clock) holds no timer: every deadline was stopped
// or fired.
func checkDrained(t *testing.T, srv *jobapi.Server, clock *fakeClock) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: end whatever is left
	_ = srv.Shutdown(ctx)
	require.NoError(t, srv.CheckInvariants(), "the server's invariants once drained")
	if clock != nil {
		require.Zero(t, clock.Pending(), "deadline timers still armed once drained")
	}
}

// reply is a decoded HTTP answer.
type reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func (h *harness) do(method, path, contentType string, body []byte) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, bytes.NewReader(body))
	require.NoError(h.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := h.ts.Client().Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(h.t, json.Unmarshal(raw, &r.Body), "%s", raw)
	}
	return r
}

func (h *harness) get(path string) reply { return h.do(http.MethodGet, path, "", nil) }

func (h *harness) postJSON(path string, v any) reply {
	h.t.Helper()
	data, err := json.Marshal(v)
	require.NoError(h.t, err)
	return h.do(http.MethodPost, path, "application/json", data)
}

// params encodes the params of a request to the echo or gate models.
func params(t testing.TB, p map[string]any) json.RawMessage {
	t.Helper()
	if p == nil {
		return nil
	}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	return b
}

// submit posts a job for the echo or gate models and returns its id.
func (h *harness) submit(taskID string, p map[string]any) string {
	h.t.Helper()
	acc, err := h.api.Submit(h.t.Context(), client.Request{TaskID: taskID, Params: params(h.t, p)})
	require.NoError(h.t, err)
	return acc.JobID
}

// snapshot is GET /jobs/{id}, which must answer 200.
func (h *harness) snapshot(id string) client.Snapshot {
	h.t.Helper()
	s, err := h.api.Snapshot(h.t.Context(), id)
	require.NoError(h.t, err)
	return s
}

// waitDone waits (through the API) until job id is terminal, returning its
// snapshot.
func (h *harness) waitDone(id string) client.Snapshot {
	h.t.Helper()
	for range 100 {
		s, err := h.api.Wait(h.t.Context(), id, 10*time.Second)
		require.NoError(h.t, err)
		if s.State.Terminal() {
			return s
		}
	}
	h.t.Fatalf("job %s never ended", id)
	return client.Snapshot{}
}

// waitBounded is one wait of at most 5 s for job id: a server that never
// ends the job fails the test at once rather than hanging it, as waitDone's
// retries would.
func (h *harness) waitBounded(id string) client.Snapshot {
	h.t.Helper()
	s, err := h.api.Wait(h.t.Context(), id, 5*time.Second)
	require.NoError(h.t, err)
	return s
}

// metric returns the value of the series name (with its labels) in h's
// /metrics, as the client reads it.
func (h *harness) metric(name string) float64 {
	h.t.Helper()
	m, err := h.api.Metrics(h.t.Context())
	require.NoError(h.t, err)
	v, ok := m[name]
	require.True(h.t, ok, "no series %s", name)
	return v
}

// until spins, yielding, until cond holds. It asserts nothing about time:
// the bounds (tries and a minute) only stop a broken test from hanging.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	giveUp := time.Now().Add(time.Minute)
	for i := 0; i < 20_000_000 && time.Now().Before(giveUp); i++ {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("never happened: %s", what)
}

// rfc9110Title is the reason phrase of status in RFC 9110, where it
// differs from net/http's StatusText.
func rfc9110Title(status int) string {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return "Content Too Large"
	case http.StatusUnprocessableEntity:
		return "Unprocessable Content"
	}
	return http.StatusText(status)
}

// requireProblem checks an RFC 9457 reply.
func requireProblem(t *testing.T, r reply, status int, detail string) {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Raw)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	require.Equal(t, float64(status), r.Body["status"])
	require.Equal(t, rfc9110Title(status), r.Body["title"])
	require.Equal(t, detail, r.Body["detail"])
}

// requireAPIError checks that err is the client's *Error for an RFC 9457
// reply of status with detail, and returns it.
func requireAPIError(t *testing.T, err error, status int, detail string) *client.Error {
	t.Helper()
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, status, e.StatusCode, "%s", e.Body)
	require.Equal(t, "about:blank", e.Type)
	require.Equal(t, rfc9110Title(status), e.Title)
	require.Equal(t, detail, e.Detail)
	require.JSONEq(t, strconv.Itoa(status), string(e.Members["status"]))
	return e
}
