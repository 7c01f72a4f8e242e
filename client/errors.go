package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// Sentinel errors, each the meaning of a status on some route. An *Error
// unwraps to one of them; compare with errors.Is. All but ErrUnavailable
// are the ledger contract's own (package ledgertype), so a caller compares
// a reply with the answer a store gives in process.
var (
	// ErrQueueFull: POST /jobs answered 429, async_max_queue jobs being
	// PENDING or RUNNING. The *Error's RetryAfter says when to try again.
	ErrQueueFull = ledgertype.ErrQueueFull
	// ErrNotFound: a job's route answered 404, the id being unknown or the
	// job evicted.
	ErrNotFound = ledgertype.ErrNotFound
	// ErrNotDone: GET /jobs/{id}/result answered 409; the *Error's State
	// says where the job stands.
	ErrNotDone = ledgertype.ErrNotDone
	// ErrTerminal: POST /jobs/{id}/cancel answered 409, the job having
	// ended already; the *Error's State names the state it ended in.
	ErrTerminal = ledgertype.ErrTerminal
	// ErrUnavailable: the server answered 503 (shutting down, async jobs
	// disabled, no worker free, too many /infer bodies in flight); the
	// *Error's RetryAfter says when to try again.
	ErrUnavailable = errors.New("client: service unavailable")
	// ErrKeyConflict: POST /jobs under an Idempotency-Key answered 422,
	// the key having been used for a job with another body (SubmitKeyed).
	ErrKeyConflict = ledgertype.ErrKeyConflict
	// ErrUnauthorized: the server answered 401, the request carrying no
	// token (Options.Token) or one the server's token file does not hold.
	ErrUnauthorized = errors.New("client: a valid bearer token is required")
	// ErrForbidden: the server answered 403, the token's role not letting
	// it do what the request asked (listing jobs takes role admin).
	ErrForbidden = errors.New("client: the token's role may not do this")
)

// anyRoute is what a status means on every route, where the route gives
// it no meaning of its own.
var anyRoute = map[int]error{http.StatusUnauthorized: ErrUnauthorized, http.StatusForbidden: ErrForbidden}

// Error is a reply other than the route's success: an RFC 9457 problem
// (application/problem+json) as the server writes every error, or any
// other reply an intermediary wrote in its place. The problem's members
// are read whatever the Content-Type, when the body is a JSON object.
type Error struct {
	Method     string
	URL        string // the request's URL, after any redirect
	StatusCode int
	// RetryAfter is the reply's Retry-After (429 and 503): seconds, or an
	// HTTP date taken relative to the reply's Date. Zero when absent.
	RetryAfter time.Duration

	// The problem's standard members, and those of its extension members
	// the server writes: the job's id and state (409), and a model's
	// error message (/infer's 422 and 500). Empty when the body is not a
	// problem.
	Type, Title, Detail string
	JobID               string
	State               State
	ModelError          string // the "error" member
	// Members holds every member of the problem, undecoded; nil when the
	// body is not a JSON object.
	Members map[string]json.RawMessage
	// Body is the reply's body as received.
	Body []byte

	sentinel error // what StatusCode means on this route; nil for none
}

// newError reads r as an Error that unwraps to sentinel.
func newError(r *reply, sentinel error) *Error {
	if sentinel == nil {
		sentinel = anyRoute[r.status]
	}
	e := &Error{
		Method: r.method, URL: r.url.String(), StatusCode: r.status, Body: r.body,
		RetryAfter: retryAfter(r.header), sentinel: sentinel,
	}
	var p wire.Problem
	if json.Unmarshal(r.body, &p) == nil {
		e.Type, e.Title, e.Detail = p.Type, p.Title, p.Detail
		e.JobID, e.State, e.ModelError = p.JobID, p.State, p.Error
	}
	if json.Unmarshal(r.body, &e.Members) != nil {
		e.Members = nil
	}
	return e
}

// Unwrap returns the sentinel the status means on the route, or nil.
func (e *Error) Unwrap() error { return e.sentinel }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client: %s %s: %d", e.Method, e.URL, e.StatusCode)
	switch {
	case e.Detail != "":
		b.WriteString(" " + e.Detail)
	case e.Title != "":
		b.WriteString(" " + e.Title)
	default:
		b.WriteString(" " + http.StatusText(e.StatusCode))
		if body := strings.TrimSpace(string(e.Body)); body != "" {
			const most = 200
			if len(body) > most {
				body = body[:most] + "..."
			}
			fmt.Fprintf(&b, ": %q", body)
		}
	}
	if e.State != "" {
		fmt.Fprintf(&b, " (state %s)", e.State)
	}
	if e.ModelError != "" {
		b.WriteString(": " + e.ModelError)
	}
	return b.String()
}

// retryAfter reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds,
// or an HTTP date taken relative to the reply's Date, or to now when the
// reply has none. Zero when absent, unreadable or past.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 32); err == nil {
		return time.Duration(max(s, 0)) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		now = time.Now()
	}
	return max(at.Sub(now), 0)
}
