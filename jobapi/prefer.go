package jobapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// Prefer: wait=N (RFC 7240 §4.3) on POST /jobs asks the server to answer
// with the job's outcome if it ends within N seconds. The wait goes through
// the store's Wait, like GET /jobs/{id}/wait: it holds no worker, and the
// ledger wakes it in the critical section that ends the job.

// preferWait returns the seconds of the first "wait" preference in the
// Prefer fields of h, and whether there is a well-formed one. RFC 7240 §2:
// preference names are case-insensitive, a value is a token or a
// quoted-string, parameters after ";" belong to the preference (wait has
// none, so they are ignored), and only the first instance of a preference
// counts. Wait's value is delta-seconds (RFC 9111 §1.2.2): digits only,
// and one too large for int64 means the largest. A "wait" that is
// ill-formed (no value, a sign, a fraction) is ignored, as RFC 7240 says a
// server ignores preferences it does not understand, and so is every later
// "wait": the first instance decides.
func preferWait(h http.Header) (int64, bool) {
	for _, field := range h.Values("Prefer") {
		for _, elem := range splitOutsideQuotes(field, ',') {
			pref := splitOutsideQuotes(elem, ';')[0]
			name, value, hasValue := strings.Cut(pref, "=")
			if !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			if !hasValue {
				return 0, false
			}
			return deltaSeconds(unquote(strings.TrimSpace(value)))
		}
	}
	return 0, false
}

// splitOutsideQuotes splits s at every sep that is not inside a
// quoted-string (RFC 9110 §5.6.4, backslash escapes included).
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote strips the quotes of a quoted-string and its escapes; any other
// value is returned as it is.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+1 < len(v)-1 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// deltaSeconds reads a non-negative decimal count of seconds; one too
// large for int64 is the largest.
func deltaSeconds(v string) (int64, bool) {
	if v == "" {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 1<<63 - 1, true
	}
	return n, true
}

// appliedWait is the wait the server grants a request that asks for n
// seconds: n, capped at max_wait in whole seconds (rounded down, since
// Preference-Applied can only name whole seconds).
func appliedWait(n int64, maxWait time.Duration) int64 {
	return min(n, int64(maxWait/time.Second))
}

// awaitSubmitted answers POST /jobs for the admitted job id when the
// client asked to wait up to secs seconds (secs > 0): 200 with the result
// when the job ends DONE within them, 200 with its terminal snapshot when
// it ends FAILED or TIMEOUT, else 202 as without the preference. Every
// answer carries Preference-Applied: wait=secs, the wait the server
// applied, and Location. The wait ends early, with the 202, when the
// shutdown's grace period ends; a client that hangs up gets nothing, and
// its job runs on.
func (s *Server) awaitSubmitted(w http.ResponseWriter, r *http.Request, id string, secs int64) {
	w.Header().Set("Preference-Applied", "wait="+strconv.FormatInt(secs, 10))
	holdWriteDeadline(w, r, time.Duration(secs)*time.Second)
	snap, err := s.waitSubmitted(r.Context(), id, time.Duration(secs)*time.Second)
	switch {
	case r.Context().Err() != nil:
		return // the client went away; its job runs on
	case err != nil || !snap.State.Terminal():
		// The wait ran out or the grace period ended; or the job was
		// evicted before the wait began (ErrNotFound, which takes
		// async_max_completed jobs ending in between), or the store failed
		// the wait (err). Either way the job was admitted, which the 202
		// says: a 404 or a 503 would deny what is known.
		if err != nil {
			s.exec.log.Error("job store failed a submit's wait", "job_id", id, "error", err)
		}
		writeAccepted(w, id)
	case snap.State == ledgertype.Done:
		s.writeDone(w, r, id, snap)
	default:
		w.Header().Set("Location", "jobs/"+id)
		writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
	}
}

// waitSubmitted is the wait of awaitSubmitted: up to d for job id to end,
// under parent, ended early by the end of the grace period. It returns the
// snapshot the store's Wait returned (zero when the job is gone, or the
// grace period was over before the wait began) and the store's failure,
// nil when the wait just ended.
//
// The wait's deadline timer is counted in TimersInv, but its handler is no
// unit of work in wg (its admission was), so Shutdown waits for it apart
// (waitWG): once the grace period is over a wait ends at once, stopping its
// timer before Shutdown returns, and none begins. Without that, Shutdown
// could return, drained, before the handler had stopped the timer.
func (s *Server) waitSubmitted(parent context.Context, id string, d time.Duration) (ledger.Snapshot, error) {
	s.mu.Lock()
	stopped := s.waitsStopped
	if !stopped {
		s.waitWG.Add(1)
	}
	s.mu.Unlock()
	if stopped {
		return ledger.Snapshot{}, nil
	}
	defer s.waitWG.Done() // after release, deferred below
	ctx, release := s.exec.requestContext(parent, d)
	defer release()
	s.waiting.Add(1)
	s.metrics.waiters.Inc()
	snap, err := s.store.Wait(ctx, id)
	s.metrics.waiters.Dec()
	s.waiting.Add(-1)
	if err != nil && (errors.Is(err, ledger.ErrNotFound) || (ctx.Err() != nil && errors.Is(err, ctx.Err()))) {
		err = nil // gone, or the wait's own end: not a failure
	}
	return snap, err
}

// stopWaits makes every Prefer: wait begun end and waits for it to stop
// its timer (waitSubmitted). Shutdown calls it once the grace period is
// over, when base has ended every such wait's context.
func (s *Server) stopWaits() {
	s.mu.Lock()
	s.waitsStopped = true
	s.mu.Unlock()
	s.waitWG.Wait()
}

// writeDone answers a submit whose job ended DONE with the result, as
// GET /jobs/{id}/result does, under a share of the reply budget
// (replies.go). Should the result not be written, because the reply
// budget cannot spare its share, or retention evicted the job between its
// end and this read (which takes async_max_completed jobs ending in
// between), or the store failed the read (a stored result that is not JSON
// included), the answer is the DONE snapshot that Wait returned: the
// outcome is known, the result is not, and GET /jobs/{id}/result reads it.
func (s *Server) writeDone(w http.ResponseWriter, r *http.Request, id string, snap ledger.Snapshot) {
	w.Header().Set("Location", "jobs/"+id)
	share, ok := s.takeReply()
	if !ok {
		writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
		return
	}
	defer share.release()
	res, done, err := s.store.Result(r.Context(), id)
	if err == nil {
		if !share.grow(res) {
			writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
			return
		}
		if err = writeResult(w, wire.Result{JobID: id, TaskID: done.TaskID, State: wireState(done.State), Result: res}); err == nil {
			return
		}
	}
	if !errors.Is(err, ledger.ErrNotFound) && r.Context().Err() == nil {
		s.exec.log.Error("job store failed a submit's result", "job_id", id, "error", err)
	}
	writeSnapshot(w, http.StatusOK, newSnapshotBody(snap, s.jobTTL))
}
