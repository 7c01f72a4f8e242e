package jobapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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
// through SubmitKeyed:
// a replay answers the id of the job that holds the key and starts
// nothing, since that job has its runner already; ledger.ErrKeyConflict
// says the key holds another request.
func (s *Server) admit(req Request, key, digest string) (string, error) {
	if !s.enter() {
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
	// too (a store whose Fail panics), or Shutdown waited for it for ever
	// (TestAdmitPanicInOrphanEndReleasesWork).
	defer func() {
		if !running {
			s.wg.Done()
		}
	}()
	defer func() {
		if orphan {
			// A panic after the Submit committed (a Clock whose AfterFunc
			// panics, as the deadline is armed): end the job, which nothing
			// would run or time out, rather than leave it holding its slot
			// (TestAdmitPanicEndsCommittedJob). The panic goes on as it came.
			s.record(id, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
		}
	}()
	if s.shared != nil {
		before = s.endCount()
	}
	if key != "" {
		id, replayed, err = s.store.SubmitKeyed(s.writes, key, digest, req.TaskID, req)
	} else {
		id, err = s.store.Submit(s.writes, req.TaskID, req)
	}
	if !replayed {
		s.noteWrite(err)
	}
	if err != nil {
		if errors.Is(err, ledger.ErrQueueFull) {
			s.metrics.rejected.Inc()
		}
		return "", err
	}
	if replayed {
		return id, nil
	}
	s.metrics.submitted.Inc()
	orphan = true
	if s.shared != nil {
		// Any replica's claimer runs it (shared.go); this one keeps its
		// deadline. The unit of work ends here, released by the defer.
		s.armAdmission(id, before)
		orphan = false
		return id, nil
	}
	s.launch(id, s.cfg.AsyncTimeout)
	orphan, running = false, true
	return id, nil
}

// launch starts the runner of the admitted job id, whose deadline is d
// from now, and records its flight. The caller has counted the runner's
// unit of work in wg.
func (s *Server) launch(id string, d time.Duration) {
	ctx, cancel, release := s.jobContext(d)
	s.mu.Lock()
	s.flights[id] = cancel
	s.runners++
	s.mu.Unlock()
	go s.run(ctx, id, release)
}

// run is the runner of one admitted job: it waits for a worker, takes the
// request, starts the job, runs the model and records the outcome. When the
// job's context ends first (deadline, cancel, shutdown), it ends the job at
// once, pending or running, by the context's cause. Every write goes
// through s.writes, never ctx (see Server.writes).
func (s *Server) run(ctx context.Context, id string, release func()) {
	defer s.wg.Done()
	defer func() {
		release()
		s.mu.Lock()
		delete(s.flights, id)
		s.runners--
		s.mu.Unlock()
	}()
	var cause error
	if err := s.workers.Acquire(ctx, 1); err != nil {
		cause = context.Cause(ctx)
	} else if s.base.Err() != nil {
		// The grace period ended while a worker came free: base is
		// cancelled before its children, so this job's context may not
		// have heard yet, but the job must not start now. It is treated
		// as the shutdown found it, waiting.
		s.workers.Release(1)
		cause = context.Cause(s.base)
	}
	var (
		req  Request
		snap ledger.Snapshot
	)
	if cause == nil {
		var err error
		req, snap, err = s.startJob(ctx, id)
		switch {
		case err == nil:
		case ctx.Err() != nil && !ended(err):
			// Its context ended while the store failed its start: it ends
			// as a job that never got a worker does.
			s.workers.Release(1)
			cause = context.Cause(ctx)
		default:
			s.workers.Release(1)
			if !ended(err) {
				// The job is live and cannot run: the store refused it for
				// good, or a runner of an earlier process took its request.
				// End it rather than leave it holding its slot with no
				// runner.
				s.log.Error("job cannot start", "job_id", id, "error", err)
				s.record(id, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
			}
			return
		}
	}
	if cause != nil {
		if s.keepPending && errors.Is(cause, ErrShuttingDown) {
			// Never started, on a durable store: the next process runs it.
			s.mu.Lock()
			s.left[id] = struct{}{}
			s.mu.Unlock()
			return
		}
		s.endByCause(id, cause)
		return
	}
	s.runJob(ctx, snap, req)
}

// startJob takes the request of job id and starts it, trying again
// (retry.go) what the store fails in passing until ctx ends. Both calls
// fail when the job already ended (cancel): TakeRequest with
// ledger.ErrTerminal, the request dropped with the job's end. Once ctx has
// ended it returns the latest failure.
func (s *Server) startJob(ctx context.Context, id string) (Request, ledger.Snapshot, error) {
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
			req, err = s.store.TakeRequest(s.writes, id)
			taken = err == nil
		}
		if taken {
			snap, err = s.store.Start(s.writes, id)
			s.noteWrite(err)
			if n > 0 && errors.Is(err, ledger.ErrNotPending) {
				// The failed try may have committed after all (its outcome
				// was unknown): the job running is this runner's.
				if cur, e := s.store.Snapshot(s.writes, id); e == nil && cur.State == ledgertype.Running {
					return req, cur, nil
				}
			}
		}
		if err == nil || !s.retryable(err) {
			return req, snap, err
		}
		s.log.Warn("job start failed in the store; retrying", "job_id", id, "error", err,
			"retry_in", retryBackoff(n).String())
		if !s.pause(ctx.Done(), n) {
			return req, snap, err
		}
	}
}

// runStarted is the runner of a job the claimer claimed (shared.go),
// started already, on the worker the claimer acquired: it runs the model
// and records the outcome, as run does once it has started its job. The
// claimer has counted it in wg and registered its flight.
func (s *Server) runStarted(ctx context.Context, snap ledger.Snapshot, req Request, release func()) {
	defer s.wg.Done()
	defer func() {
		release()
		s.mu.Lock()
		delete(s.flights, snap.ID)
		s.runners--
		s.mu.Unlock()
	}()
	s.runJob(ctx, snap, req)
}

// runJob runs the model on the request of the started job snap, on a
// worker the caller acquired (execute releases it), and records the
// outcome. When the job's context ends first (deadline, cancel, shutdown),
// it ends the job by the context's cause; a job that ended elsewhere
// (errJobEnded) is terminal already and left as it is.
func (s *Server) runJob(ctx context.Context, snap ledger.Snapshot, req Request) {
	id := snap.ID
	// Start's own snapshot: a lookup now could find the job evicted.
	s.metrics.queueWait.Observe(snap.StartedAt.Sub(snap.CreatedAt).Seconds())
	var (
		o  outcome
		ok bool
	)
	if ctx.Err() == nil {
		o, ok = s.execute(ctx, req)
	} else {
		s.workers.Release(1) // ended already (a claimed job past its deadline): never run
	}
	switch {
	case (!ok || (o.err != nil && ctx.Err() != nil)) && errors.Is(context.Cause(ctx), errJobEnded):
		// Ended on another replica: terminal already, nothing to record.
	case !ok || (o.err != nil && ctx.Err() != nil):
		s.endByCause(id, context.Cause(ctx))
	case o.err != nil:
		s.record(id, ledgertype.Failed, nil, o.err)
	default:
		s.record(id, ledgertype.Done, o.res, nil)
	}
}

// ended reports whether err, from a call on one job, says the job has
// ended (or been evicted since), so that there is nothing left to do.
func ended(err error) bool {
	return errors.Is(err, ledger.ErrTerminal) || errors.Is(err, ledger.ErrNotPending) || errors.Is(err, ledger.ErrNotFound)
}

// cancelJob ends a job that is not terminal FAILED "canceled" and cancels
// its model's context, and returns the snapshot the transition produced. It
// returns ledger.ErrTerminal with the job's (terminal) snapshot, or
// ledger.ErrNotFound, when there is nothing to cancel, and a failure of the
// store as it came.
func (s *Server) cancelJob(id string) (ledger.Snapshot, error) {
	snap, err := s.end(id, ledgertype.Failed, nil, wireError(ErrCanceled, ""))
	if err != nil {
		return snap, err
	}
	s.mu.Lock()
	cancel := s.flights[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrCanceled)
	}
	return snap, nil
}

// endByCause ends a job whose context ended: TIMEOUT for its deadline,
// FAILED with the cause otherwise. A job already terminal is left as it is.
func (s *Server) endByCause(id string, cause error) {
	switch {
	case errors.Is(cause, ErrDeadline):
		s.record(id, ledgertype.TimedOut, nil, wireError(ErrDeadline, ""))
	case errors.Is(cause, ErrCanceled), errors.Is(cause, ErrShuttingDown):
		s.record(id, ledgertype.Failed, nil, wireError(cause, ""))
	default:
		s.record(id, ledgertype.Failed, nil, cause)
	}
}

// record is a runner's end of its job. A job already ended is left as it
// is, and logged (its model's outcome is lost). An end the store fails in
// passing (a full disk) is tried again (retry.go) until it commits, the
// job is found ended, or the store's writes end (Close, Shutdown's hard
// stop). One the store refuses for good (a result it cannot hold) is
// replaced by FAILED "job store failure", so that the job does not stay
// live with no runner. A job the store will not end at all is logged, and
// stays live until the store is reopened (a durable store then ends it
// FAILED "interrupted by restart") or, on a PostgreSQL store, until its
// lease lapses, unrenewed once an end was tried, and a reaper ends it
// FAILED "worker lost".
func (s *Server) record(id string, state ledger.State, res json.RawMessage, cause error) {
	for n := 0; ; n++ {
		snap, err := s.end(id, state, res, cause)
		switch {
		case err == nil:
			return
		case ended(err):
			as := "gone" // evicted since
			if snap.ID != "" {
				as = snap.State.String()
			}
			s.log.Warn("job end refused: the job had ended", "job_id", id, "state", state.String(),
				"ended_as", as, "ended_with", snap.Err)
			return
		case s.retryable(err):
			if s.pause(nil, n) {
				continue
			}
		case state != ledgertype.Failed || !errors.Is(cause, ErrStoreFailed):
			state, res, cause = ledgertype.Failed, nil, wireError(ErrStoreFailed, "")
			continue
		}
		s.log.Error("job left live: the store refused to end it", "job_id", id, "error", err)
		return
	}
}

// end records the terminal transition to state and returns the snapshot
// the store produced with it (with ledger.ErrTerminal, the job's current
// one); when it happened (the job was not already terminal) it counts it
// and logs one line. Everything it reports comes from that snapshot, not
// from a later lookup, which a Submit evicting the job could answer 404.
// A failure of the store is logged and returned.
func (s *Server) end(id string, state ledger.State, res json.RawMessage, cause error) (ledger.Snapshot, error) {
	var (
		snap ledger.Snapshot
		err  error
	)
	switch state {
	case ledgertype.Done:
		snap, err = s.store.Finish(s.writes, id, res)
	case ledgertype.TimedOut:
		snap, err = s.store.Timeout(s.writes, id, cause)
	default:
		snap, err = s.store.Fail(s.writes, id, cause)
	}
	s.noteWrite(err)
	if err != nil {
		if !ended(err) {
			s.log.Error("job store failed", "op", "end", "job_id", id, "state", state.String(), "error", err)
		}
		return snap, err
	}
	s.metrics.completed.WithLabelValues(state.String()).Inc()
	attrs := []slog.Attr{slog.String("job_id", id), slog.String("state", state.String()),
		slog.String("task_id", snap.TaskID)}
	if !snap.StartedAt.IsZero() {
		run := snap.CompletedAt.Sub(snap.StartedAt)
		s.metrics.runTime.Observe(run.Seconds())
		attrs = append(attrs, slog.Float64("queue_wait_ms", millis(snap.StartedAt.Sub(snap.CreatedAt))),
			slog.Float64("run_ms", millis(run)))
	}
	if cause != nil {
		attrs = append(attrs, slog.String("error", cause.Error()))
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "job ended", attrs...)
	return snap, nil
}

// millis is d in milliseconds, for log lines.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
