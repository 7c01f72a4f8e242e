package jobapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/jobledger/jobledger/wire"
)

// infer is POST /infer, the synchronous path: take the body's share of the
// byte budget, parse, wait for a worker, run the model, serialise. The
// deadline is Config.AsyncTimeout from when the body has been read and
// parsed, as a job's is from its admission (the reading is bounded by the
// http.Server's ReadTimeout): 503 when no worker frees up before it, 504
// when the model is still running at it. The write deadline is moved to
// the http.Server's WriteTimeout plus the deadline past the end of the
// parsing, too (holdWriteDeadline).
func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	charge := bodyCharge(r.ContentLength, s.cfg.MaxBodyBytes)
	if !s.inferBytes.TryAcquire(charge) {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusServiceUnavailable, detailInferBusy, nil)
		return
	}
	defer s.inferBytes.Release(charge)
	req, perr := parseRequest(w, r, s.cfg.MaxBodyBytes, s.exec.model)
	// The reply may be held up to the deadline from now. Set before the
	// body was read, the held write deadline ran from the end of the
	// headers, so an upload slower than the WriteTimeout (with no
	// ReadTimeout, or a longer one) would have its reply cut off.
	holdWriteDeadline(w, r, s.cfg.AsyncTimeout)
	if perr != nil {
		writeProblem(w, perr.status, perr.detail, nil)
		return
	}
	if !s.exec.enter() {
		writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		return
	}
	defer s.exec.leave()
	ctx, release := s.exec.requestContext(r.Context(), s.cfg.AsyncTimeout)
	defer release()

	if err := s.exec.acquire(ctx); err != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, ErrShuttingDown):
			writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		case errors.Is(cause, ErrDeadline):
			writeProblem(w, http.StatusServiceUnavailable, detailNoWorker, nil)
		}
		// Otherwise the client went away: nothing to answer (counted).
		return
	}
	o, ok := s.exec.execute(ctx, req)
	switch {
	case !ok || (o.err != nil && ctx.Err() != nil):
		// The context's first cause decides. A client that went away gets
		// nothing (counted): it was answered, counted and logged as a 503
		// "server shutting down".
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, ErrDeadline):
			writeProblem(w, http.StatusGatewayTimeout, detailDeadline, nil)
		case errors.Is(cause, ErrShuttingDown):
			writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		}
	case errors.Is(o.err, ErrModelPanic):
		writeProblem(w, http.StatusInternalServerError, detailModelPanicked, &wire.Problem{Error: o.err.Error()})
	case o.err != nil:
		writeProblem(w, http.StatusUnprocessableEntity, detailModelFailed, &wire.Problem{Error: o.err.Error()})
	default:
		writeJSON(w, http.StatusOK, wire.InferResult{TaskID: req.TaskID, Result: o.res})
	}
}
