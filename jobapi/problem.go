package jobapi

import (
	"encoding/json"
	"net/http"

	"github.com/jobledger/jobledger/wire"
)

// Fixed problem details (wire.Problem's Detail), one per cause
// (docs/http.md lists them); wire.DetailKeyConflict is the one the client
// matches on.
const (
	detailBadJSON       = "body is not valid JSON"
	detailUnknownField  = "body has an unknown field"
	detailTrailingData  = "body has data after the JSON object"
	detailBadField      = "body has a field of the wrong type"
	detailBadBase64     = "image is not valid base64"
	detailTaskIDTooLong = "task_id exceeds 128 bytes"
	detailTaskIDControl = "task_id must not contain control characters"
	detailParamsObject  = "params must be a JSON object"
	detailTooLarge      = "body exceeds max_body_bytes"
	detailBodyTimeout   = "body did not arrive in time"
	detailMediaType     = "Content-Type must be application/json"
	detailMethod        = "method not allowed"
	detailNoRoute       = "no such route"
	detailNoJob         = "no such job"
	detailQueueFull     = "job queue is full"
	// detailTenantQueueFull names the caller's own bound, so that a client
	// can tell its share is used up while the queue has room for others.
	detailTenantQueueFull = "this tenant's share of the job queue is full"
	detailAsyncDisabled   = "asynchronous jobs are disabled"
	detailShuttingDown    = "server shutting down"
	detailBadTimeout      = "timeout must be a non-negative integer of milliseconds"
	detailNotDone         = "job is not DONE"
	detailTerminal        = "job is already terminal"
	detailNoWorker        = "no worker became free before the deadline"
	detailDeadline        = "deadline exceeded"
	detailModelFailed     = "model failed"
	detailModelPanicked   = "model panicked"
	detailInferBusy       = "too many /infer requests in flight"
	detailSubmitBusy      = "too many job submissions in flight"
	detailReplyBusy       = "too many result bytes in flight"
	detailStoreFailed     = "job store unavailable"
	detailBadKey          = "Idempotency-Key must be 1 to 255 printable characters"
)

// titles are the reason phrases of RFC 9110 where net/http's StatusText
// still gives an older one (RFC 7231's "Request Entity Too Large", WebDAV's
// "Unprocessable Entity").
var titles = map[int]string{
	http.StatusRequestEntityTooLarge: "Content Too Large",
	http.StatusUnprocessableEntity:   "Unprocessable Content",
}

// title is the problem title of status: its RFC 9110 reason phrase.
func title(status int) string {
	if t, ok := titles[status]; ok {
		return t
	}
	return http.StatusText(status)
}

// retryAfter503 is the Retry-After of every 503 that does not set its own:
// each cause (shutting down, no free worker, async disabled, a failed
// store) is answered at
// once, so a client told nothing would retry at once, too.
const retryAfter503 = "1"

// writeProblem writes an application/problem+json reply. extra, when not
// nil, sets the job_id, state and error members. A 503 always carries
// Retry-After (RFC 9110 §15.6.4), and a 408 Connection: close, set here so
// that no cause can miss them.
func writeProblem(w http.ResponseWriter, status int, detail string, extra *wire.Problem) {
	p := wire.Problem{Type: "about:blank", Title: title(status), Status: status, Detail: detail}
	if extra != nil {
		p.JobID, p.State, p.Error = extra.JobID, extra.State, extra.Error
	}
	data, _ := json.Marshal(p) // a problem always marshals
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Del("Content-Length")
	if status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		h.Set("Retry-After", retryAfter503)
	}
	if status == http.StatusRequestTimeout {
		// RFC 9110 §15.5.9: the server has given up on this connection,
		// whose body is left half read.
		h.Set("Connection", "close")
	}
	w.WriteHeader(status)
	w.Write(append(data, '\n')) // the client went away
}
