package jobapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/jobledger/jobledger/jobtable"
)

// admit submits req to the ledger and starts its runner. It returns the
// job's id, jobtable.ErrQueueFull, or ErrShuttingDown. The job's deadline
// starts now, at admission.
//
// The unit of work enter counted in wg passes to the runner; until the
// runner starts, admit releases it itself, on a refusal and on a panic
// alike. Submit panics on programmer misuse (an Options.NewID that repeats
// an id, a Clock whose Now panics); that panic still reaches the caller,
// and net/http's per-request recovery, but no longer leaves wg counting a
// runner that never started, which made Shutdown wait forever.
func (s *Server) admit(req Request) (string, error) {
	if !s.enter() {
		return "", ErrShuttingDown
	}
	running := false
	defer func() {
		if !running {
			s.wg.Done()
		}
	}()
	id, err := s.table.Submit(req.TaskID, req)
	if err != nil {
		s.metrics.rejected.Inc()
		return "", err
	}
	s.metrics.submitted.Inc()
	ctx, cancel, release := s.deadlineContext(s.base, s.cfg.AsyncTimeout)
	s.mu.Lock()
	s.flights[id] = cancel
	s.runners++
	s.mu.Unlock()
	go s.run(ctx, id, release)
	running = true
	return id, nil
}

// run is the runner of one admitted job: it waits for a worker, takes the
// request, starts the job, runs the model and records the outcome. When the
// job's context ends first (deadline, cancel, shutdown), it ends the job at
// once, pending or running, by the context's cause.
func (s *Server) run(ctx context.Context, id string, release func()) {
	defer s.wg.Done()
	defer func() {
		release()
		s.mu.Lock()
		delete(s.flights, id)
		s.runners--
		s.mu.Unlock()
	}()
	if err := s.workers.Acquire(ctx, 1); err != nil {
		s.endByCause(id, context.Cause(ctx))
		return
	}
	// Both fail when the job already ended (cancel): TakeRequest with
	// jobtable.ErrTerminal, the request dropped with the job's end.
	req, err := s.table.TakeRequest(id)
	var snap jobtable.Snapshot
	if err == nil {
		snap, err = s.table.Start(id)
	}
	if err != nil {
		s.workers.Release(1)
		return
	}
	// Start's own snapshot: a lookup now could find the job evicted.
	s.metrics.queueWait.Observe(snap.StartedAt.Sub(snap.CreatedAt).Seconds())
	o, ok := s.execute(ctx, req)
	switch {
	case !ok || (o.err != nil && ctx.Err() != nil):
		s.endByCause(id, context.Cause(ctx))
	case o.err != nil:
		s.end(id, jobtable.Failed, nil, o.err)
	default:
		s.end(id, jobtable.Done, o.res, nil)
	}
}

// cancelJob ends a job that is not terminal FAILED "canceled" and cancels
// its model's context, and returns the snapshot the transition produced. It
// returns jobtable.ErrTerminal with the job's (terminal) snapshot, or
// jobtable.ErrNotFound, when there is nothing to cancel.
func (s *Server) cancelJob(id string) (jobtable.Snapshot, error) {
	snap, err := s.end(id, jobtable.Failed, nil, wireError(ErrCanceled, ""))
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
		s.end(id, jobtable.TimedOut, nil, wireError(ErrDeadline, "")) //nolint:errcheck // already terminal is fine
	case errors.Is(cause, ErrCanceled), errors.Is(cause, ErrShuttingDown):
		s.end(id, jobtable.Failed, nil, wireError(cause, "")) //nolint:errcheck // already terminal is fine
	default:
		s.end(id, jobtable.Failed, nil, cause) //nolint:errcheck // already terminal is fine
	}
}

// end records the terminal transition to state and returns the snapshot
// the ledger produced with it (with jobtable.ErrTerminal, the job's current
// one); when it happened (the job was not already terminal) it counts it
// and logs one line. Everything it reports comes from that snapshot, not
// from a later lookup, which a Submit evicting the job could answer 404.
func (s *Server) end(id string, state jobtable.State, res json.RawMessage, cause error) (jobtable.Snapshot, error) {
	var (
		snap jobtable.Snapshot
		err  error
	)
	switch state {
	case jobtable.Done:
		snap, err = s.table.Finish(id, res)
	case jobtable.TimedOut:
		snap, err = s.table.Timeout(id, cause)
	default:
		snap, err = s.table.Fail(id, cause)
	}
	if err != nil {
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
