package jobapi

import (
	"context"
	"errors"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// admit submits req to the store and starts its runner. It returns the
// job's id, ledger.ErrQueueFull, ErrShuttingDown, or a failure of the
// store. The job's deadline starts now, at admission.
//
// The unit of work enter counted in wg passes to the runner; until the
// runner starts, admit releases it itself, on a refusal and on a panic
// alike. Submit panics on programmer misuse (an Options.NewID that repeats
// an id, a Clock whose Now panics); that panic still reaches the caller,
// and net/http's per-request recovery, but no longer leaves wg counting a
// runner that never started, which made Shutdown wait forever. A panic
// after the Submit committed ends the job FAILED "job store failure"
// first, since nothing would run it or keep its deadline.
//
// With an idempotency key (key not empty, digest its body's) it submits
// under the key: a replay answers the id of the job that holds the key and
// starts nothing, since that job has its runner already; ledger.ErrKeyConflict
// says the key holds another request.
func (e *executor) admit(req Request, key, digest string) (string, error) {
	if !e.enter() {
		return "", ErrShuttingDown
	}
	var (
		id       string
		replayed bool
		err      error
		before   uint64 // the ends heard before the Submit, for armAdmission
		// orphan: the job was admitted, and has neither its runner nor
		// (shared mode) its admission deadline yet.
		orphan  bool
		running bool
	)
	// Two defers, this one registered first so that it runs last: the
	// unit of work is released even when the orphan's end below panics
	// too (a store whose Fail panics), or Shutdown would wait for it for
	// ever.
	defer func() {
		if !running {
			e.wg.Done()
		}
	}()
	defer func() {
		if orphan {
			// A panic after the Submit committed (a Clock whose AfterFunc
			// panics, as the deadline is armed): end the job, which nothing
			// would run or time out, rather than leave it holding its slot.
			// The panic goes on as it came.
			e.record(id, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
		}
	}()
	if e.shared != nil {
		before = e.endCount()
	}
	id, replayed, err = e.store.Submit(e.writes, ledger.Submission{TaskID: req.TaskID, Key: key, Digest: digest}, req)
	if !replayed {
		e.noteWrite(err)
	}
	if err != nil {
		if errors.Is(err, ledger.ErrQueueFull) {
			e.metrics.rejected.Inc()
		}
		return "", err
	}
	if replayed {
		return id, nil
	}
	e.metrics.submitted.Inc()
	orphan = true
	if e.shared != nil {
		// Any replica's claimer runs it (shared.go); this one keeps its
		// deadline. The unit of work ends here, released by the defer.
		e.armAdmission(id, before)
		orphan = false
		return id, nil
	}
	e.launch(id, e.timeout)
	orphan, running = false, true
	return id, nil
}

// launch starts the runner of the admitted job id, whose deadline is d
// from now, and records its flight. The caller has counted the runner's
// unit of work in wg.
func (e *executor) launch(id string, d time.Duration) {
	ctx, cancel, release := e.jobContext(d)
	e.mu.Lock()
	e.flights[id] = cancel
	e.runners++
	e.mu.Unlock()
	go e.run(ctx, id, release)
}

// run is the runner of one admitted job: it waits for a worker, takes the
// request, starts the job, runs the model and records the outcome. When the
// job's context ends first (deadline, cancel, shutdown), it ends the job at
// once, pending or running, by the context's cause. Every write goes
// through e.writes, never ctx (see executor.writes).
func (e *executor) run(ctx context.Context, id string, release func()) {
	defer e.wg.Done()
	defer func() {
		release()
		e.mu.Lock()
		delete(e.flights, id)
		e.runners--
		e.mu.Unlock()
	}()
	var cause error
	if err := e.workers.Acquire(ctx, 1); err != nil {
		cause = context.Cause(ctx)
	} else if e.base.Err() != nil {
		// The grace period ended while a worker came free: base is
		// cancelled before its children, so this job's context may not
		// have heard yet, but the job must not start now. It is treated
		// as the shutdown found it, waiting.
		e.workers.Release(1)
		cause = context.Cause(e.base)
	}
	var (
		req  Request
		snap ledger.Snapshot
	)
	if cause == nil {
		var err error
		req, snap, err = e.startJob(ctx, id)
		switch {
		case err == nil:
		case ctx.Err() != nil && !ended(err):
			// Its context ended while the store failed its start: it ends
			// as a job that never got a worker does.
			e.workers.Release(1)
			cause = context.Cause(ctx)
		default:
			e.workers.Release(1)
			if !ended(err) {
				// The job is live and cannot run: the store refused it for
				// good, or a runner of an earlier process took its request.
				// End it rather than leave it holding its slot with no
				// runner.
				e.log.Error("job cannot start", "job_id", id, "error", err)
				e.record(id, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
			}
			return
		}
	}
	if cause != nil {
		if e.keepPending && errors.Is(cause, ErrShuttingDown) {
			// Never started, on a durable store: the next process runs it.
			e.mu.Lock()
			e.left[id] = struct{}{}
			e.mu.Unlock()
			return
		}
		state, err := byCause(cause)
		e.record(id, state, nil, err)
		return
	}
	e.runJob(ctx, snap, req)
}

// startJob takes the request of job id and starts it, trying again
// (retry.go) what the store fails in passing until ctx ends. Both calls
// fail when the job already ended (cancel): TakeRequest with
// ledger.ErrTerminal, the request dropped with the job's end. Once ctx has
// ended it returns the latest failure.
func (e *executor) startJob(ctx context.Context, id string) (Request, ledger.Snapshot, error) {
	var (
		req   Request
		taken bool
	)
	for n := 0; ; n++ {
		var (
			snap ledger.Snapshot
			err  error
		)
		if !taken {
			req, err = e.store.TakeRequest(e.writes, id)
			taken = err == nil
		}
		if taken {
			snap, err = e.store.Start(e.writes, id)
			e.noteWrite(err)
			if n > 0 && errors.Is(err, ledger.ErrNotPending) {
				// The failed try may have committed after all (its outcome
				// was unknown): the job running is this runner'e.
				if cur, serr := e.store.Snapshot(e.writes, id); serr == nil && cur.State == ledgertype.Running {
					return req, cur, nil
				}
			}
		}
		if err == nil || !e.retryable(err) {
			return req, snap, err
		}
		e.log.Warn("job start failed in the store; retrying", "job_id", id, "error", err,
			"retry_in", retryBackoff(n).String())
		if !e.pause(ctx.Done(), n) {
			return req, snap, err
		}
	}
}

// runStarted is the runner of a job the claimer claimed (shared.go),
// started already, on the worker the claimer acquired: it runs the model
// and records the outcome, as run does once it has started its job. The
// claimer has counted it in wg and registered its flight.
func (e *executor) runStarted(ctx context.Context, snap ledger.Snapshot, req Request, release func()) {
	defer e.wg.Done()
	defer func() {
		release()
		e.mu.Lock()
		delete(e.flights, snap.ID)
		e.runners--
		e.mu.Unlock()
	}()
	e.runJob(ctx, snap, req)
}

// runJob runs the model on the request of the started job snap, on a
// worker the caller acquired (execute releases it), and records the
// outcome. When the job's context ends first (deadline, cancel, shutdown),
// it ends the job by the context's cause; a job that ended elsewhere
// (errJobEnded) is terminal already and left as it is.
func (e *executor) runJob(ctx context.Context, snap ledger.Snapshot, req Request) {
	id := snap.ID
	// Start's own snapshot: a lookup now could find the job evicted.
	e.metrics.queueWait.Observe(snap.StartedAt.Sub(snap.CreatedAt).Seconds())
	var (
		o  outcome
		ok bool
	)
	if ctx.Err() == nil {
		o, ok = e.execute(ctx, req)
	} else {
		e.workers.Release(1) // ended already (a claimed job past its deadline): never run
	}
	switch {
	case (!ok || (o.err != nil && ctx.Err() != nil)) && errors.Is(context.Cause(ctx), errJobEnded):
		// Ended on another replica: terminal already, nothing to record.
	case !ok || (o.err != nil && ctx.Err() != nil):
		state, err := byCause(context.Cause(ctx))
		e.record(id, state, nil, err)
	case o.err != nil:
		e.record(id, ledgertype.Failed, nil, o.err)
	default:
		e.record(id, ledgertype.Done, o.res, nil)
	}
}
