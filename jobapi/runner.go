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
func (s *Server) admit(req Request) (string, error) {
	if !s.enter() {
		return "", ErrShuttingDown
	}
	id, err := s.table.Submit(req.TaskID, req)
	if err != nil {
		s.wg.Done()
		s.metrics.rejected.Inc()
		return "", err
	}
	s.metrics.submitted.Inc()
	ctx, cancel, release := s.deadlineContext(s.base, s.cfg.AsyncTimeout)
	s.mu.Lock()
	s.flights[id] = cancel
	s.mu.Unlock()
	go s.run(ctx, id, release)
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
		s.mu.Unlock()
	}()
	if err := s.workers.Acquire(ctx, 1); err != nil {
		s.endByCause(id, context.Cause(ctx))
		return
	}
	req, err := s.table.TakeRequest(id)
	if err == nil {
		err = s.table.Start(id) // fails when the job already ended (cancel)
	}
	if err != nil {
		s.workers.Release(1)
		return
	}
	if snap, err := s.table.Snapshot(id); err == nil {
		s.metrics.queueWait.Observe(snap.StartedAt.Sub(snap.CreatedAt).Seconds())
	}
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
// its model's context. It returns jobtable.ErrTerminal or ErrNotFound when
// there is nothing to cancel.
func (s *Server) cancelJob(id string) error {
	if err := s.end(id, jobtable.Failed, nil, wireError(ErrCanceled, "")); err != nil {
		return err
	}
	s.mu.Lock()
	cancel := s.flights[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrCanceled)
	}
	return nil
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

// end records the terminal transition to state; when it happened (the job
// was not already terminal) it counts it and logs one line.
func (s *Server) end(id string, state jobtable.State, res json.RawMessage, cause error) error {
	var err error
	switch state {
	case jobtable.Done:
		err = s.table.Finish(id, res)
	case jobtable.TimedOut:
		err = s.table.Timeout(id, cause)
	default:
		err = s.table.Fail(id, cause)
	}
	if err != nil {
		return err
	}
	s.metrics.completed.WithLabelValues(state.String()).Inc()
	attrs := []slog.Attr{slog.String("job_id", id), slog.String("state", state.String())}
	if snap, err := s.table.Snapshot(id); err == nil {
		attrs = append(attrs, slog.String("task_id", snap.TaskID))
		if !snap.StartedAt.IsZero() {
			run := snap.CompletedAt.Sub(snap.StartedAt)
			s.metrics.runTime.Observe(run.Seconds())
			attrs = append(attrs, slog.Float64("queue_wait_ms", millis(snap.StartedAt.Sub(snap.CreatedAt))),
				slog.Float64("run_ms", millis(run)))
		}
	}
	if cause != nil {
		attrs = append(attrs, slog.String("error", cause.Error()))
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "job ended", attrs...)
	return nil
}

// millis is d in milliseconds, for log lines.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
