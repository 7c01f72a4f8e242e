package jobapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jobledger/jobledger/internal/redact"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/wire"
)

// postJob is POST /jobs: check the Idempotency-Key, take the body's share
// of the byte budget, parse, admit, answer 202 at once; or, when the
// client sent Prefer: wait=N, answer the job's outcome if it ends within N
// seconds (prefer.go). Under an Idempotency-Key whose job is retained, the
// body is read but not parsed, and the submit is answered from that job
// (idempotency.go).
func (s *Server) postJob(w http.ResponseWriter, r *http.Request) {
	key, ok := idempotencyKey(r.Header)
	if !ok {
		writeProblem(w, http.StatusBadRequest, detailBadKey, nil)
		return
	}
	charge := bodyCharge(r.ContentLength, s.cfg.MaxBodyBytes)
	if !s.submitBytes.TryAcquire(charge) {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusServiceUnavailable, detailSubmitBusy, nil)
		return
	}
	// The share is given back exactly once: as soon as the request is
	// admitted or refused (a replay's or a Prefer: wait's wait holds none),
	// or by the defer on any other way out, a panic in the parse, a
	// RequestValidator or the admission included, which would otherwise
	// keep it for ever.
	released := false
	release := func() {
		if !released {
			released = true
			s.submitBytes.Release(charge)
		}
	}
	defer release()
	var digest string
	if key != "" {
		var done bool
		if digest, done = s.replay(w, r, key, release); done {
			return
		}
	}
	req, perr := parseRequest(w, r, s.cfg.MaxBodyBytes, s.exec.model)
	if perr != nil {
		release()
		writeProblem(w, perr.status, perr.detail, nil)
		return
	}
	who := s.tenancyOf(r)
	id, err := s.exec.admit(req, who, key, digest)
	release() // admitted, the request is bounded by the queue
	s.metrics.countTenant(who, err)
	switch {
	case errors.Is(err, ledger.ErrQueueFull):
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusTooManyRequests, detailQueueFull, nil)
	case errors.Is(err, ledger.ErrTenantQueueFull):
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusTooManyRequests, detailTenantQueueFull, nil)
	case errors.Is(err, ErrShuttingDown):
		writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
	case errors.Is(err, ledger.ErrKeyConflict):
		writeProblem(w, http.StatusUnprocessableEntity, wire.DetailKeyConflict, nil)
	case err != nil:
		s.storeFailed(w, r, err)
	default:
		s.answerAdmitted(w, r, id)
	}
}

// answerAdmitted answers a submit whose job id is admitted: 202, or, with
// Prefer: wait=N, the job's outcome if it ends within the wait.
func (s *Server) answerAdmitted(w http.ResponseWriter, r *http.Request, id string) {
	if n, ok := preferWait(r.Header); ok {
		if wait := appliedWait(n, s.cfg.MaxWait); wait > 0 {
			s.awaitSubmitted(w, r, id, wait)
			return
		}
	}
	writeAccepted(w, id)
}

// writeAccepted answers 202 for the admitted job id.
func writeAccepted(w http.ResponseWriter, id string) {
	// A relative reference (RFC 9110 §10.2.2), resolved against the
	// request's own URL: /jobs gives /jobs/{id}, and /api/jobs, the URL a
	// client sees when the handler is mounted under a prefix (by
	// http.StripPrefix or a proxy), gives /api/jobs/{id}. The server never
	// sees the prefix, so an absolute path could not be right.
	w.Header().Set("Location", "jobs/"+id)
	writeAcceptedBody(w, id)
}

// getJob is GET /jobs/{id}.
func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	snap, err := s.store.Snapshot(scoped(r), r.PathValue("id"))
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		writeProblem(w, http.StatusNotFound, detailNoJob, nil)
	case err != nil:
		s.storeFailed(w, r, err)
	default:
		writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
	}
}

// waitJob is GET /jobs/{id}/wait?timeout=N: the snapshot once the job is
// terminal or N milliseconds (at most max_wait) have passed. The store's
// Wait returns the final snapshot even of a job evicted during the wait,
// and the latest snapshot, with the context's error, at the timeout. A
// wait that its client's hang-up ends is not answered.
func (s *Server) waitJob(w http.ResponseWriter, r *http.Request) {
	timeout, ok := parseTimeout(r.URL.Query(), s.cfg.MaxWait)
	if !ok {
		writeProblem(w, http.StatusBadRequest, detailBadTimeout, nil)
		return
	}
	ctx, cancel := context.WithTimeout(scoped(r), timeout)
	defer cancel()
	s.waiting.Add(1)
	s.metrics.waiters.Inc()
	snap, err := s.store.Wait(ctx, r.PathValue("id"))
	s.metrics.waiters.Dec()
	s.waiting.Add(-1)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		writeProblem(w, http.StatusNotFound, detailNoJob, nil)
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && r.Context().Err() != nil:
		// The wait ended because its client went away, not at its
		// timeout: there is no one to answer, and the request is counted
		// 499 (counted), not as the 200 of a timeout.
	case err != nil && (ctx.Err() == nil || !errors.Is(err, ctx.Err())):
		s.storeFailed(w, r, err) // not the end of this wait's own context
	default: // terminal, or the timeout with the latest snapshot
		writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
	}
}

// parseTimeout reads the wait's timeout: absent means max; a value that is
// not a non-negative decimal integer is refused; larger than max is max.
func parseTimeout(q map[string][]string, max time.Duration) (time.Duration, bool) {
	vals, present := q["timeout"]
	if !present {
		return max, true
	}
	if len(vals) != 1 || vals[0] == "" {
		return 0, false
	}
	for _, c := range vals[0] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil || ms > int64(max/time.Millisecond) {
		return max, true // only digits: too large for int64 or over max
	}
	return time.Duration(ms) * time.Millisecond, true
}

// getResult is GET /jobs/{id}/result. The reply holds its share of the
// reply budget from before the result is read until it is written
// (replies.go): 503 with Retry-After when the share does not fit.
func (s *Server) getResult(w http.ResponseWriter, r *http.Request) {
	share, ok := s.takeReply()
	if !ok {
		replyBusy(w)
		return
	}
	defer share.release()
	res, snap, err := s.store.Result(scoped(r), r.PathValue("id"))
	switch {
	case errors.Is(err, ledger.ErrNotDone):
		writeProblem(w, http.StatusConflict, detailNotDone, &wire.Problem{JobID: snap.ID, State: wireState(snap.State)})
	case errors.Is(err, ledger.ErrNotFound):
		writeProblem(w, http.StatusNotFound, detailNoJob, nil)
	case err != nil:
		s.storeFailed(w, r, err)
	case !share.grow(res):
		replyBusy(w)
	default:
		body := wire.Result{JobID: snap.ID, TaskID: snap.TaskID, State: wireState(snap.State), Result: res}
		if err := writeResult(w, body); err != nil {
			s.storeFailed(w, r, err)
		}
	}
}

// cancel is POST /jobs/{id}/cancel: a job not yet terminal ends FAILED
// "canceled" and its model's context is cancelled. The reply is the
// snapshot the store's transition returned, not a second lookup, which a
// concurrent Submit could answer 404 by evicting the job in between.
//
// A caller scoped to its tenant cancels only its own jobs: the job is
// looked up in its scope first, so another tenant's job is 404, from the
// lookup that answers an unknown id. A job's tenant never changes, so the
// lookup cannot go stale before the cancel.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var err error
	if ctx := scoped(r); isScoped(ctx) {
		_, err = s.store.State(ctx, id)
	}
	var snap ledger.Snapshot
	if err == nil {
		snap, err = s.exec.cancelJob(id)
	}
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		writeProblem(w, http.StatusNotFound, detailNoJob, nil)
	case errors.Is(err, ledger.ErrTerminal):
		writeProblem(w, http.StatusConflict, detailTerminal, &wire.Problem{JobID: id, State: wireState(snap.State)})
	case err != nil:
		s.storeFailed(w, r, err)
	default:
		writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
	}
}

// storeFailed answers a request whose call to the store failed with an
// error that is none of the contract's answers: an I/O error, a closed
// store, a stored value that no longer decodes. The outcome of that call
// is unknown, and the server cannot tell a passing failure from a lasting
// one, so the answer is 503 with Retry-After (docs/http.md): a retry may
// reach a store that recovered, or a restarted server. It is logged, unless
// the client has gone (its context ended), when nothing is answered.
func (s *Server) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	s.exec.log.Error("job store failed", "method", r.Method, "path", r.URL.Path, "error", err)
	writeProblem(w, http.StatusServiceUnavailable, detailStoreFailed, nil)
}

// healthz is GET /healthz: 200 while serving, 503 once shutdown began.
// For a store with a listener, the field "listener" says "up", or "down
// since TIME: CAUSE": the server still serves then, its waits late. While
// the store fails writes (writehealth.go), "status" says "degraded" and
// "store" says "writes failing since TIME: CAUSE"; the answer stays 200,
// since a check that took the server out of service would also keep away
// the submits whose commit ends the report.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	if s.exec.isClosed() {
		writeProblem(w, http.StatusServiceUnavailable, detailShuttingDown, nil)
		return
	}
	body := map[string]string{"status": "ok"}
	if s.listener != nil {
		body["listener"] = "up"
		if ok, since, err := s.listener.ListenerHealth(); !ok {
			body["listener"] = fmt.Sprintf("down since %s: %s", since.UTC().Format(time.RFC3339), redact.Store(err.Error()))
		}
	}
	if health := s.storeHealth(); health != "" {
		body["status"] = "degraded"
		body["store"] = health
	}
	writeJSON(w, http.StatusOK, body)
}

// storeHealth says since when and why the store's writes fail, with any
// password the error quotes redacted, or "" while they commit.
func (s *Server) storeHealth() string {
	failing, since, err := s.exec.health.report()
	if !failing {
		return ""
	}
	return fmt.Sprintf("writes failing since %s: %s", since.UTC().Format(time.RFC3339), redact.Store(err.Error()))
}
