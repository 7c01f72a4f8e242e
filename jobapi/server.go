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

	"golang.org/x/sync/semaphore"

	"github.com/jobledger/jobledger/jobtable"
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
	// Clock gives the time for the ledger, deadlines and metrics. If left
	// nil, the wall clock does.
	Clock Clock
	// NewID returns fresh job ids. If left nil, the ledger's default (128
	// random bits) does.
	NewID func() string

	_ struct{} // forbid positional literals
}

// Server is the job API, an http.Handler. Create it with New, mount it
// anywhere, and call Shutdown before the process ends.
//
// Synchronisation:
//
//   - cfg, model, log, clock, table, workers, inferBytes, submitBytes,
//     metrics, mux,
//     base and baseCancel are set by New and never change.
//   - table is safe for concurrent use (see package jobtable); workers is
//     the one worker pool, shared by both paths; inferBytes is the byte
//     budget of /infer bodies (handler_infer.go).
//   - mu guards closed, drained, flights and runners, and the retired flag
//     of every deadline timer (deadline.go). It is a leaf: nothing else is
//     locked, and neither the table, a model nor the clock is called, while
//     it is held.
//   - wg counts every goroutine and handler that runs a job: Add happens
//     only under mu while closed is false, so Shutdown's Wait never races
//     an Add.
//   - waiting and timers are atomic.
//
// The invariants below are checked by checkInvariants (invariants.go),
// which tests, stress runs and fuzz targets reach through
// CheckInvariants; each clause carries the name given here.
// "Drained" is quiescence: Shutdown has seen every unit of job work return,
// and no new work can start.
type Server struct {
	cfg     Config
	model   Model
	log     *slog.Logger
	clock   Clock
	table   *jobtable.Table[Request, json.RawMessage]
	workers *semaphore.Weighted
	metrics *metrics
	mux     *http.ServeMux

	// inferBytes and submitBytes bound the bodies of /infer and POST /jobs
	// requests in flight (bodies.go).
	inferBytes, submitBytes *semaphore.Weighted

	// base ends, with cause ErrShuttingDown, when the shutdown grace
	// period is over; every job's context derives from it.
	base       context.Context
	baseCancel context.CancelCauseFunc

	mu     sync.Mutex
	closed bool // Shutdown has begun: enter refuses new work
	// drained: Shutdown saw wg reach zero; implies closed.
	//
	// Invariant (DrainInv): drained implies the table holds no PENDING or
	// RUNNING job, since every runner ends its job before it returns.
	drained bool
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

	wg      sync.WaitGroup
	waiting atomic.Int64 // clients blocked in a wait

	// timers counts the deadline timers armed and not yet retired, that is
	// neither stopped before they fired nor fired (deadline.go).
	//
	// Invariant (TimersInv): timers >= 0, and drained implies timers == 0:
	// every unit of work stops its timer as it ends, so none is left armed
	// once the work is over.
	timers atomic.Int64
}

// New returns a Server for cfg, refusing an invalid cfg with an error that
// wraps ErrInvalidConfig.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, model: opts.Model, log: opts.Logger, clock: opts.Clock,
		flights: make(map[string]context.CancelCauseFunc)}
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
	table, err := jobtable.New[Request, json.RawMessage](jobtable.Config{
		MaxQueue:     cfg.AsyncMaxQueue,
		JobTTL:       cfg.AsyncJobTTL,
		MaxCompleted: cfg.AsyncMaxCompleted,
		Now:          s.clock.Now,
		NewID:        opts.NewID,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	s.table = table
	s.workers = semaphore.NewWeighted(int64(cfg.Workers))
	s.inferBytes = semaphore.NewWeighted(inferBudget(cfg))
	s.submitBytes = semaphore.NewWeighted(submitBudget(cfg))
	s.metrics = newMetrics(table.Stats)
	s.base, s.baseCancel = context.WithCancelCause(context.Background())
	s.mux = s.routes()
	return s, nil
}

// ServeHTTP serves the job API.
//
// OPTIONS * (RFC 9110 §9.3.7, a question about the server as a whole) is
// answered 200 with an Allow of every method the API accepts. An
// http.Server answers OPTIONS * itself, without Allow, before any handler
// runs, unless its DisableGeneralOptionsHandler is set, as cmd/jobserver
// does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.RequestURI == "*" && r.Method == http.MethodOptions {
		h := w.Header()
		h.Set("Allow", s.serverAllow())
		h.Set("Content-Length", "0") // §9.3.7: no content, so Content-Length 0
		w.WriteHeader(http.StatusOK)
		return
	}
	// http.ServeMux answers a few requests itself, outside the documented
	// contract: a redirect for a path that is not clean, a bare 400 for the
	// target "*" with any other method, a plain-text 404 for CONNECT. No
	// route of the API matches any of them, so they get the API's own 404.
	if r.RequestURI == "*" || r.Method == http.MethodConnect || r.URL.Path != cleanPath(r.URL.Path) {
		writeProblem(w, http.StatusNotFound, detailNoRoute, nil)
		return
	}
	s.mux.ServeHTTP(w, r)
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

// Shutdown refuses new jobs (503), lets the admitted ones run until ctx
// ends, then ends those left FAILED "server shutting down", cancelling their
// models' contexts, and waits for every model to return. Clients waiting on
// a job are answered as it ends. Shutdown returns ctx's error when the grace
// period ran out, nil when every job finished within it. A model that
// ignores its context delays Shutdown until it returns.
//
// Reads (snapshots, waits, results, cancel, /metrics) go on being served
// throughout, so that a job finishing in the grace period can still be
// read. Shutdown does not close listeners: stop the http.Server after it
// returns, as cmd/jobserver does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(idle)
	}()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
		s.baseCancel(ErrShuttingDown)
		<-idle
	}
	s.baseCancel(ErrShuttingDown)
	s.mu.Lock()
	s.drained = true
	s.mu.Unlock()
	return err
}
