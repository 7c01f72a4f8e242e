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
//   - cfg, store, jobTTL, listener, exec, inferBytes, submitBytes,
//     replyBytes, metrics and mux are set by New and never change; store,
//     listener, the byte budgets (bodies.go, replies.go) and exec
//     (executor.go) are safe for concurrent use.
//   - mu guards waitsStopped; it is a leaf, never held with exec's.
//   - waitWG counts the Prefer: waits of POST /jobs in flight (prefer.go):
//     Add happens only under mu while waitsStopped is false, so stopWaits'
//     Wait never races an Add.
//   - waiting is atomic.
type Server struct {
	cfg   Config
	store ledger.Ledger[Request, json.RawMessage]
	// jobTTL is the store's retention TTL, for expires_at
	// (Options.LedgerJobTTL); zero or negative when unknown or disabled.
	jobTTL time.Duration
	// listener is the store's report on its listener connection, if it
	// has one (store.go).
	listener listenerHealth
	// exec runs the jobs (executor.go).
	exec    *executor
	metrics *metrics
	mux     *http.ServeMux

	// inferBytes and submitBytes bound the bodies of /infer and POST /jobs
	// requests in flight (bodies.go); replyBytes the replies that carry a
	// stored result (replies.go).
	inferBytes, submitBytes *semaphore.Weighted
	replyBytes              byteBudget

	mu sync.Mutex
	// waitsStopped is set once Shutdown has seen every Prefer: wait end;
	// waitWG counts the waits begun (prefer.go).
	waitsStopped bool
	waitWG       sync.WaitGroup
	waiting      atomic.Int64 // clients blocked in a wait
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
	model, log, clock := opts.Model, opts.Logger, opts.Clock
	if model == nil {
		m, err := newModel(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		model = m
	}
	if log == nil {
		log = slog.Default()
	}
	if clock == nil {
		clock = realClock{}
	}
	s := &Server{cfg: cfg, store: l, jobTTL: opts.LedgerJobTTL,
		exec: newExecutor(l, model, cfg.Workers, cfg.AsyncTimeout, log, clock, opts.Durable)}
	s.inferBytes = semaphore.NewWeighted(inferBudget(cfg))
	s.submitBytes = semaphore.NewWeighted(submitBudget(cfg))
	s.replyBytes = semaphore.NewWeighted(cfg.MaxReplyBytesInFlight)
	s.listener, _ = ledger.As[listenerHealth](s.store)
	s.metrics = newMetrics(s.store.Stats, s.listener, &s.exec.health)
	s.exec.metrics = s.metrics
	s.mux = s.routes()
	if err := s.exec.start(); err != nil {
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
// route "unmatched" as every request no route matches is.
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
	bound := s.exec.newHardStop(ctx)
	defer bound.release()
	err := s.exec.drain(ctx, bound)
	s.stopWaits()
	s.exec.markDrained()
	return err
}

// Close ends the server's use of its store: it ends the context of the
// store's writes, and leaves the store open for its owner to close. Call
// Close once Shutdown has returned and the HTTP server has stopped
// (Shutdown leaves the store open, so that reads are still answered after
// the jobs have ended); a request still in flight then gets 503. It
// always returns nil.
func (s *Server) Close() error {
	s.exec.stop()
	return nil
}
