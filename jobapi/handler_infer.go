package jobapi

import (
	"context"
	"errors"
	"math"
	"net/http"
)

// infer is POST /infer, the synchronous path: take the body's share of the
// byte budget, parse, wait for a worker, run the model, serialise. The
// deadline is Config.AsyncTimeout from receipt, as for a job: 503 when no
// worker frees up before it, 504 when the model is still running at it.
func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	charge := inferCharge(r.ContentLength, s.cfg.MaxBodyBytes)
	if !s.inferBytes.TryAcquire(charge) {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusServiceUnavailable, detailInferBusy, nil)
		return
	}
	defer s.inferBytes.Release(charge)
	req, perr := parseRequest(w, r, s.cfg.MaxBodyBytes, s.model)
	if perr != nil {
		writeProblem(w, perr.status, perr.detail, nil)
		return
	}
	if !s.enter() {
		writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		return
	}
	defer s.wg.Done()
	ctx, cancel, release := s.deadlineContext(r.Context(), s.cfg.AsyncTimeout)
	defer release()
	stop := context.AfterFunc(s.base, func() { cancel(ErrShuttingDown) })
	defer stop()

	if err := s.workers.Acquire(ctx, 1); err != nil {
		if errors.Is(context.Cause(ctx), ErrShuttingDown) {
			writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
			return
		}
		writeProblem(w, http.StatusServiceUnavailable, detailNoWorker, nil)
		return
	}
	o, ok := s.execute(ctx, req)
	switch {
	case !ok || (o.err != nil && ctx.Err() != nil):
		if errors.Is(context.Cause(ctx), ErrDeadline) {
			writeProblem(w, http.StatusGatewayTimeout, detailDeadline, nil)
		} else {
			writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		}
	case errors.Is(o.err, ErrModelPanic):
		writeProblem(w, http.StatusInternalServerError, detailModelPanicked, &problem{Error: o.err.Error()})
	case o.err != nil:
		writeProblem(w, http.StatusUnprocessableEntity, detailModelFailed, &problem{Error: o.err.Error()})
	default:
		writeJSON(w, http.StatusOK, inferBody{TaskID: req.TaskID, Result: o.res})
	}
}

// inferBudget is the byte budget of /infer bodies in flight: workers x
// max_body_bytes, what the workers could be running at once.
//
// Without it every /infer read its body before waiting for a worker, so
// 150 concurrent 8 MB requests held 2.8 GB and starved /metrics. The bound
// is taken before the body is read, and is not the worker pool itself: a
// slow upload holding a worker would stall the async jobs sharing it. A
// byte budget rather than a count lets many small requests queue for a
// worker, as before, while large ones are shed with 503 and Retry-After.
func inferBudget(cfg Config) int64 {
	if cfg.MaxBodyBytes > math.MaxInt64/int64(cfg.Workers) {
		return math.MaxInt64
	}
	return int64(cfg.Workers) * cfg.MaxBodyBytes
}

// inferCharge is the share of the budget a request of Content-Length n
// holds from before its body is read until its reply: n, at least 1, or
// maxBody when n is unknown (-1) or larger (the body will get a 413 after
// maxBody bytes).
func inferCharge(n, maxBody int64) int64 {
	if n < 0 || n > maxBody {
		return maxBody
	}
	return max(n, 1)
}
