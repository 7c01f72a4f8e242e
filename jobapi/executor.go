package jobapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/jobledger/jobledger/ledger"
)

// executor runs the jobs of a Server: the worker pool, every job's
// deadline, the retries of the writes the store failed, shared-mode
// claiming, and Shutdown's drain and hard stop. It stays in package jobapi,
// not a package of its own, because it runs the package's Model on its
// Request and ends jobs with its wire errors, which a package below jobapi
// could not name without moving them too; the handlers use only its methods
// (enter, leave, admit, cancelJob, acquire, execute, requestContext) and
// read its model, log and write health.
//
// Synchronisation:
//
//   - model, log, clock, store, timeout, keepPending, transient, metrics,
//     shared, closing, workers, base, baseCancel, writes and stopWrites are
//     set by newExecutor and never change; store, workers and transient are
//     safe for concurrent use. health has its own mutex (writehealth.go).
//   - mu guards closed, drained, flights, runners, left, the retired flag
//     of every deadline timer (deadline.go), and, in shared mode
//     (shared.go), ends, ended, admitTimers and timersStopped. It is a
//     leaf: nothing else is locked, and neither the store, a model nor the
//     clock is called, while it is held.
//   - wg counts every goroutine and handler that runs a job: Add happens
//     only under mu while closed is false, so drain's Wait never races an
//     Add.
//   - timerWG counts the admission timers that fired and are recording
//     their end (shared.go): Add happens only under mu while timersStopped
//     is false, so stopAdmissions' Wait never races an Add.
//   - endsOff, timers and running are atomic.
//
// The invariants below are checked by checkInvariants
// (invariants.go); each clause carries the name given here. "Drained" is
// quiescence: drain has seen every unit of job work return, and no new
// work can start.
type executor struct {
	model   Model
	log     *slog.Logger
	clock   Clock
	store   ledger.Ledger[Request, json.RawMessage]
	timeout time.Duration // every job's deadline from admission (Config.AsyncTimeout)
	// keepPending: the store is durable (Options.Durable), so a job still
	// PENDING when the grace period ends is left PENDING for the next
	// process to run (Recovered), not ended.
	keepPending bool
	// transient is the store's word on which of its failures may pass
	// (retry.go), if it gives one.
	transient transientReporter
	// health is what the runners' and handlers' writes saw of the store's.
	health  writeHealth
	metrics *metrics

	// shared is the store's Shared side: non-nil, the server runs in
	// shared mode (shared.go), its jobs claimed by any replica's claimer.
	shared  ledger.Shared[Request]
	closing chan struct{} // closed when drain begins
	workers *semaphore.Weighted

	// base ends, with cause ErrShuttingDown, when the shutdown grace
	// period is over; every job's context derives from it.
	base       context.Context
	baseCancel context.CancelCauseFunc

	// writes is the context of every write to the store (Submit,
	// TakeRequest, Start and the ends), by handlers and runners alike; only
	// reads take the request's context. A job's own context will not do:
	// it ends exactly when its runner must record the end, and a durable
	// store gives up a write whose context has ended. Nor will the
	// request's: a client hanging up during a Submit would leave its
	// outcome unknown. writes ends only in stop, once drain has seen every
	// runner return, or at the hard stop past the grace period (hardstop.go).
	writes     context.Context
	stopWrites context.CancelFunc
	stopOnce   sync.Once

	mu     sync.Mutex
	closed bool // drain has begun: enter refuses new work
	// drained: drain saw wg reach zero; implies closed.
	//
	// Invariant (DrainInv): drained implies the store holds no PENDING or
	// RUNNING job but the left ones still PENDING, since every runner ends
	// its job before it returns, except one that keepPending lets leave its
	// job PENDING.
	drained bool
	// left holds the ids of the jobs left PENDING at shutdown for the next
	// process (keepPending). Some may have ended since, by a cancel.
	left map[string]struct{}
	// flights holds the cancel of the context of every admitted job whose
	// runner has not returned (cancel cancels through it). admit adds the
	// entry and counts the runner in one critical section; the runner
	// removes its own entry and uncounts itself in one, as it returns.
	//
	// Invariant (FlightsInv): len(flights) == runners, every entry is
	// non-nil, and drained implies runners == 0.
	flights map[string]context.CancelCauseFunc
	runners int // runners started by admit whose run has not returned

	// ends counts the ends of jobs onEnd has heard (shared mode); ended
	// holds the ids of the latest endRing of them, the nth at n%endRing.
	ends  uint64
	ended [endRing]string
	// admitTimers holds the admission deadline of every job admitted here
	// in shared mode whose timer has neither fired nor been stopped (its
	// stop is nil until the timer is made: see armAdmission);
	// timersStopped is set once drain has stopped them all.
	//
	// Invariant (AdmitTimersInv): drained implies admitTimers is empty.
	admitTimers   map[string]*admitTimer
	timersStopped bool
	timerWG       sync.WaitGroup

	wg sync.WaitGroup

	// endsOff is set once drain has finished, or stop has run: onEnd then
	// returns at once (shared.go). A ledger's OnEnd cannot be unregistered.
	endsOff atomic.Bool

	// timers counts the deadline timers armed and not yet retired, that is
	// neither stopped before they fired nor fired (deadline.go).
	//
	// Invariant (TimersInv): timers >= 0, and drained implies timers == 0.
	timers atomic.Int64
	// running counts the models running now, each holding a worker.
	running atomic.Int64
}

// newExecutor returns the executor of jobs kept in store, run by model on
// workers workers, each within timeout of its admission. It starts
// nothing: call start.
func newExecutor(store ledger.Ledger[Request, json.RawMessage], model Model, workers int, timeout time.Duration,
	log *slog.Logger, clock Clock, durable bool) *executor {
	e := &executor{model: model, log: log, clock: clock, store: store, timeout: timeout, keepPending: durable,
		flights: make(map[string]context.CancelCauseFunc), admitTimers: map[string]*admitTimer{},
		left: map[string]struct{}{}, closing: make(chan struct{}), workers: semaphore.NewWeighted(int64(workers))}
	e.transient, _ = ledger.As[transientReporter](store)
	e.base, e.baseCancel = context.WithCancelCause(context.Background())
	e.writes, e.stopWrites = context.WithCancel(context.Background())
	e.shared = sharedOf(store)
	return e
}

// start begins the execution: in shared mode the claimer, otherwise a
// runner for every job the store recovered. On an error nothing runs and
// the executor is stopped.
func (e *executor) start() error {
	if e.shared != nil {
		e.startShared()
		return nil
	}
	if err := e.runRecovered(); err != nil {
		e.baseCancel(ErrShuttingDown)
		e.stop() // nothing was started
		return err
	}
	return nil
}

// enter counts one unit of job work in wg, or reports false once drain
// has begun.
func (e *executor) enter() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.wg.Add(1)
	return true
}

// leave uncounts a unit of work that enter counted.
func (e *executor) leave() { e.wg.Done() }

// isClosed reports whether drain has begun.
func (e *executor) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// drain is the first half of Server.Shutdown: it refuses new work, lets
// the work in flight run until ctx ends, then ends the grace period (base)
// and waits, within bound, for every unit of work and, in shared mode,
// every admission timer that fired. It returns ctx's error when the grace
// period ran out.
func (e *executor) drain(ctx context.Context, bound *hardStop) error {
	e.mu.Lock()
	if !e.closed {
		close(e.closing)
	}
	e.closed = true
	e.mu.Unlock()
	idle := waitChan(&e.wg)
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
		e.baseCancel(ErrShuttingDown)
		bound.await("jobs", idle)
	}
	e.baseCancel(ErrShuttingDown)
	e.stopAdmissions(bound)
	return err
}

// markDrained marks the drain over: quiescence, which the invariants check,
// and no more ends taken in.
func (e *executor) markDrained() {
	e.mu.Lock()
	e.drained = true
	e.mu.Unlock()
	e.endsOff.Store(true)
}

// stop ends the store's writes: a write in flight fails, and so does every
// later one.
func (e *executor) stop() {
	e.stopOnce.Do(func() {
		e.endsOff.Store(true)
		e.stopWrites()
	})
}
