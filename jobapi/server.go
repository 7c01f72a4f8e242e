package jobapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/jobledger/jobledger/ledger"
)

// Options are the parts of a Server that are code rather than
// configuration. Every field is optional.
type Options struct {
	// Model runs the jobs. If left nil, the built-in model named by
	// Config.Model runs them.
	Model Model
	// Logger receives one line per job reaching a terminal state, and the
	// stack of every model panic. If left nil, slog.Default() does.
	Logger *slog.Logger
	// Clock gives the time for deadlines and metrics. If left nil, the
	// wall clock does. The ledger should run on it too: the deadline of a
	// job it recovered counts from the job's CreatedAt.
	Clock Clock
	// LedgerJobTTL is the ledger's JobTTL, from which snapshots compute
	// expires_at (completed_at + the TTL). If left zero, or negative (no
	// eviction by time), snapshots carry no expires_at: the server cannot
	// read a ledger's configuration.
	LedgerJobTTL time.Duration
	// Durable says that the ledger keeps its jobs across a restart (the
	// SQLite and PostgreSQL stores): a job not yet started when the grace
	// period of Shutdown ends is then left PENDING for the next process,
	// not ended.
	Durable bool

	_ struct{} // forbid positional literals
}

// Server is the job API, an http.Handler. Create it with New, mount it
// anywhere, and call Shutdown before the process ends.
//
// Synchronisation:
//
//   - cfg, model, log, clock, store, jobTTL, workers, inferBytes,
//     submitBytes, replyBytes, metrics, mux, base, baseCancel, writes,
//     stopWrites and keepPending are set by New and never change.
//   - replyBytes, the budget of result replies in flight (replies.go), is
//     safe for concurrent use.
//   - store is safe for concurrent use (the ledger's contract); workers is
//     the one worker pool, shared by both paths; inferBytes is the byte
//     budget of /infer bodies (handler_infer.go).
//   - listener (the store's report on its listener, nil for a store
//     without one) and transient (the store's word on which failures
//     pass, nil for a store without one) are set by New; both are safe
//     for concurrent use. health has its own mutex (writehealth.go).
//   - shared (the store's Shared side, nil for a store of one process) and
//     closing (closed once, under mu, when Shutdown begins) are set by New.
//   - mu guards closed, drained, flights, runners, left and waitsStopped,
//     the retired flag of every deadline timer (deadline.go), and, in
//     shared mode (shared.go), ends, ended, admitTimers and timersStopped.
//     It is a leaf: nothing else is locked, and neither the store, a model
//     nor the clock is called, while it is held.
//   - wg counts every goroutine and handler that runs a job: Add happens
//     only under mu while closed is false, so Shutdown's Wait never races
//     an Add.
//   - timerWG counts the admission timers that fired and are recording
//     their end (shared.go): Add happens only under mu while timersStopped
//     is false, so stopAdmissions' Wait never races an Add.
//   - waitWG counts the Prefer: waits of POST /jobs in flight (prefer.go):
//     Add happens only under mu while waitsStopped is false, so stopWaits'
//     Wait never races an Add.
//   - waiting, timers and endsOff are atomic.
//
// The invariants below are checked by checkInvariants (invariants.go),
// which tests, stress runs and fuzz targets reach through
// CheckInvariants; each clause carries the name given here.
// "Drained" is quiescence: Shutdown has seen every unit of job work return,
// and no new work can start.
type Server struct {
	cfg   Config
	model Model
	log   *slog.Logger
	clock Clock
	store ledger.Ledger[Request, json.RawMessage]
	// jobTTL is the store's retention TTL, for expires_at
	// (Options.LedgerJobTTL); zero or negative when unknown or disabled.
	jobTTL time.Duration
	// keepPending: the store is durable (Options.Durable), so a job still
	// PENDING when the grace period ends is left PENDING for the next
	// process to run (Recovered), not ended.
	keepPending bool

	// listener is the store's report on its listener connection, if it
	// has one (store.go).
	listener listenerHealth
	// transient is the store's word on which of its failures may pass
	// (retry.go), if it gives one.
	transient transientReporter
	// health is what the runners' and handlers' writes saw of the store's.
	health writeHealth

	// shared is the store's Shared side: non-nil, the server runs in
	// shared mode (shared.go), its jobs claimed by any replica's claimer.
	shared  ledger.Shared[Request]
	closing chan struct{} // closed when Shutdown begins
	workers *semaphore.Weighted
	metrics *metrics
	mux     *http.ServeMux

	// inferBytes and submitBytes bound the bodies of /infer and POST /jobs
	// requests in flight (bodies.go); replyBytes the replies that carry a
	// stored result (replies.go).
	inferBytes, submitBytes *semaphore.Weighted
	replyBytes              byteBudget

	// base ends, with cause ErrShuttingDown, when the shutdown grace
	// period is over; every job's context derives from it.
	base       context.Context
	baseCancel context.CancelCauseFunc

	// writes is the context of every write to the store (Submit,
	// TakeRequest, Start and the ends), by handlers and runners alike; only
	// reads take the request's context. A job's own context will not do:
	// it ends exactly when its runner must record the end (the deadline, a
	// cancel, the end of the grace period), and a durable store gives up a
	// write whose context has ended, which would leave the job RUNNING after
	// its runner returned, holding its slot of the queue until a restart.
	// Nor will the request's: a client hanging up during a Submit would
	// leave its outcome unknown, perhaps an admitted job with no runner.
	// writes ends only in Close, once Shutdown has seen every runner
	// return, or in Shutdown itself at HardStop past the grace period
	// (hardStop); stopWrites ends it.
	writes     context.Context
	stopWrites context.CancelFunc
	closeOnce  sync.Once

	mu     sync.Mutex
	closed bool // Shutdown has begun: enter refuses new work
	// drained: Shutdown saw wg reach zero; implies closed.
	//
	// Invariant (DrainInv): drained implies the store holds no PENDING or
	// RUNNING job but the left ones still PENDING, since every runner ends
	// its job before it returns, except one that keepPending lets leave its
	// job PENDING.
	drained bool
	// left holds the ids of the jobs left PENDING at shutdown for the next
	// process (keepPending). Some may have ended since: a cancel after
	// Shutdown, or one that ended the job just before its runner, its
	// context ended by the shutdown first, took it for left.
	left map[string]struct{}
	// flights holds the cancel of the context of every admitted job whose
	// runner has not returned (cancelJob cancels through it). admit adds
	// the entry and counts the runner in one critical section; the runner
	// removes its own entry and uncounts itself in one, as it returns.
	//
	// Invariant (FlightsInv): len(flights) == runners, every entry is
	// non-nil, and drained implies runners == 0. A runner that forgot its
	// entry would grow the map by one job, and keep that job's context,
	// forever.
	flights map[string]context.CancelCauseFunc
	runners int // runners started by admit whose run has not returned

	// ends counts the ends of jobs onEnd has heard (shared mode); ended
	// holds the ids of the latest endRing of them, the nth at n%endRing.
	ends  uint64
	ended [endRing]string
	// admitTimers holds the admission deadline of every job admitted here
	// in shared mode whose timer has neither fired nor been stopped (its
	// stop is nil until the timer is made: see armAdmission);
	// timersStopped is set once Shutdown has stopped them all.
	//
	// Invariant (AdmitTimersInv): drained implies admitTimers is empty.
	admitTimers   map[string]*admitTimer
	timersStopped bool
	timerWG       sync.WaitGroup

	// waitsStopped is set once Shutdown has seen every Prefer: wait end;
	// waitWG counts the waits begun (prefer.go).
	waitsStopped bool
	waitWG       sync.WaitGroup

	wg      sync.WaitGroup
	waiting atomic.Int64 // clients blocked in a wait

	// endsOff is set once Shutdown has drained the server, or Close has
	// run: onEnd then returns at once (shared.go). A ledger's OnEnd cannot
	// be unregistered, so a server on a caller's shared ledger would
	// otherwise take in every end for as long as the ledger lives.
	endsOff atomic.Bool

	// timers counts the deadline timers armed and not yet retired, that is
	// neither stopped before they fired nor fired (deadline.go).
	//
	// Invariant (TimersInv): timers >= 0, and drained implies timers == 0:
	// every unit of work stops its timer as it ends, so none is left armed
	// once the work is over.
	timers atomic.Int64
}

// New returns a Server that keeps its jobs in l, refusing an invalid cfg
// with an error that wraps ErrInvalidConfig. Open l with
// cfg.LedgerConfig(); the caller closes it, once Shutdown and Close have
// returned. New starts a runner for every job l recovered (recovery.go); a
// store that cannot be read is an error. A shared ledger (ledger.Shared,
// found with ledger.As) puts the server in shared mode (shared.go). A
// shared ledger's OnEnd cannot be unregistered: it goes on calling the
// server after Shutdown, which ignores those calls once drained (or
// closed), so the ledger may outlive the server and serve others.
func New(l ledger.Ledger[Request, json.RawMessage], cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if l == nil {
		return nil, fmt.Errorf("%w: no ledger", ErrInvalidConfig)
	}
	s := &Server{cfg: cfg, model: opts.Model, log: opts.Logger, clock: opts.Clock, store: l,
		jobTTL: opts.LedgerJobTTL, keepPending: opts.Durable, flights: make(map[string]context.CancelCauseFunc),
		admitTimers: map[string]*admitTimer{}, left: map[string]struct{}{}, closing: make(chan struct{})}
	if s.model == nil {
		m, err := newModel(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		s.model = m
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	s.workers = semaphore.NewWeighted(int64(cfg.Workers))
	s.inferBytes = semaphore.NewWeighted(inferBudget(cfg))
	s.submitBytes = semaphore.NewWeighted(submitBudget(cfg))
	s.replyBytes = semaphore.NewWeighted(cfg.MaxReplyBytesInFlight)
	s.listener, _ = ledger.As[listenerHealth](s.store)
	s.transient, _ = ledger.As[transientReporter](s.store)
	s.metrics = newMetrics(s.store.Stats, s.listener, &s.health)
	s.base, s.baseCancel = context.WithCancelCause(context.Background())
	s.writes, s.stopWrites = context.WithCancel(context.Background())
	s.mux = s.routes()
	if s.shared = sharedOf(s.store); s.shared != nil {
		s.startShared()
		return s, nil
	}
	if err := s.runRecovered(); err != nil {
		s.baseCancel(ErrShuttingDown)
		_ = s.Close() // nothing was started
		return nil, err
	}
	return s, nil
}

// ServeHTTP serves the job API.
//
// OPTIONS * (RFC 9110 §9.3.7, a question about the server as a whole) is
// answered 200 with an Allow of every method the API accepts. An
// http.Server answers OPTIONS * itself, without Allow, before any handler
// runs, unless its DisableGeneralOptionsHandler is set, as cmd/jobserver
// does.
//
// http.ServeMux answers a few requests itself, outside the documented
// contract: a redirect for a path that is not clean, a bare 400 for the
// target "*" with any other method, a plain-text 404 for CONNECT. No
// route of the API matches any of them, so they get the API's own 404.
// These requests never reach the mux, so they are counted here, under the
// route "unmatched" as every request no route matches is
// (TestUnroutedRequestsUncounted).
//
// The connection of a request whose body is chunked is closed after the
// reply (framing.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	closeAfterChunked(w, r)
	if r.RequestURI == "*" || r.Method == http.MethodConnect || r.URL.Path != cleanPath(r.URL.Path) {
		s.counted(routeUnmatched, http.HandlerFunc(s.unrouted)).ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// unrouted answers a request that ServeHTTP keeps from the mux: OPTIONS *
// with the server's Allow, anything else with the API's 404.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	if r.RequestURI == "*" && r.Method == http.MethodOptions {
		h := w.Header()
		h.Set("Allow", s.serverAllow())
		h.Set("Content-Length", "0") // §9.3.7: no content, so Content-Length 0
		w.WriteHeader(http.StatusOK)
		return
	}
	writeProblem(w, http.StatusNotFound, detailNoRoute, nil)
}

// cleanPath is p in the canonical form http.ServeMux would redirect to: rooted,
// with no "." or ".." elements and no repeated slashes, keeping a trailing
// slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// enter counts one unit of job work in wg, or reports false once shutdown
// has begun.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// HardStop bounds how long Shutdown waits, once its grace period is over,
// for the work in flight to record its ends before it ends the store's
// writes (see Shutdown).
const HardStop = 5 * time.Second

// Shutdown refuses new jobs (503), lets the admitted ones run until ctx
// ends, then ends those left FAILED "server shutting down", cancelling their
// models' contexts, and waits for every model to return. With a durable
// store that New opened ("store": "sqlite:PATH"), a job not yet started
// when ctx ends is left PENDING instead: the next process on the store
// runs it, its deadline still counted from its admission. In shared mode
// (shared.go) the claimer claims nothing once Shutdown has begun: the jobs
// already claimed run on through the grace period, and the others are left
// PENDING for the other replicas, whatever the store; a job whose Claim was
// in flight as Shutdown began runs too, or, when the grace period ends
// before it starts, ends FAILED "server shutting down" like every job this
// replica claimed (a claim starts a job, which is never claimed again).
// Clients waiting on
// a job are answered as it ends. Shutdown returns ctx's error when the grace
// period ran out, nil when every job finished within it.
//
// Once the grace period is over, Shutdown waits up to HardStop, by the
// server's clock, for the work in flight (models returning, runners
// recording their jobs' ends and, in shared mode, admission deadlines that
// fired recording their TIMEOUTs: one bound for all, hardstop.go) and then
// ends the store's writes, as Close does: a write in flight fails, and so
// does every later one, cancels included. A job whose end was not recorded by then is left as a crash
// would leave it, its outcome unknown to clients: a durable store's
// restart ends it FAILED "interrupted by restart" (a job never started
// stays PENDING), PostgreSQL's reaper FAILED "worker lost" once its lease
// lapses, and with the memory store it goes with the process. Shutdown
// then waits for every model and store call to return: one that ignores
// its context delays it until it does.
//
// Reads (snapshots, waits, results, cancel, /metrics) go on being served
// throughout, so that a job finishing in the grace period can still be
// read, and leaves the store open. Shutdown does not close listeners: stop
// the http.Server after it returns, then call Close, as cmd/jobserver does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		close(s.closing)
	}
	s.closed = true
	s.mu.Unlock()
	bound := s.newHardStop(ctx)
	defer bound.release()
	idle := waitChan(&s.wg)
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
		s.baseCancel(ErrShuttingDown)
		bound.await("jobs", idle)
	}
	s.baseCancel(ErrShuttingDown)
	s.stopAdmissions(bound)
	s.stopWaits()
	s.mu.Lock()
	s.drained = true
	s.mu.Unlock()
	s.endsOff.Store(true)
	return err
}

// Close ends the server's use of its store: it ends the context of the
// store's writes, and leaves the store open for its owner to close. Call
// Close once Shutdown has returned and the HTTP server has stopped
// (Shutdown leaves the store open, so that reads are still answered after
// the jobs have ended); a request still in flight then gets 503. It
// always returns nil.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.endsOff.Store(true)
		s.stopWrites()
	})
	return nil
}
