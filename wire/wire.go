package wire

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// State is a job's state as the API names it: a ledgertype.State's wire
// name.
type State string

// The states of a job, as ledgertype names them.
const (
	Pending  State = "PENDING"
	Running  State = "RUNNING"
	Done     State = "DONE"
	Failed   State = "FAILED"
	TimedOut State = "TIMEOUT"
)

// Valid reports whether s names one of the states.
func (s State) Valid() bool {
	_, ok := ledgertype.ParseState(string(s))
	return ok
}

// Terminal reports whether s names a terminal state: DONE, FAILED or
// TIMEOUT.
func (s State) Terminal() bool {
	st, ok := ledgertype.ParseState(string(s))
	return ok && st.Terminal()
}

// Request is the body of POST /jobs and POST /infer. Every field is
// optional for the server; the model decides what it needs.
type Request struct {
	TaskID string `json:"task_id,omitempty"` // at most 128 bytes
	// Image is sent base64 (standard, padded), as the server expects.
	Image []byte `json:"image,omitempty"`
	// Params must be a JSON object.
	Params json.RawMessage `json:"params,omitempty"`
}

// Accepted answers POST /jobs.
type Accepted struct {
	JobID string `json:"job_id"`
	State State  `json:"state"`
	// Location is not in the body: a client sets it to the reply's
	// Location resolved against the request's URL (RFC 3986 §5). The
	// server writes the relative jobs/{id}, right under any prefix the API
	// is mounted at. Nil when the reply has none.
	Location *url.URL `json:"-"`
}

// Snapshot is a job, as GET /jobs/{id}, its wait and its cancel return it.
// Each time is in UTC and absent (zero) until set.
type Snapshot struct {
	JobID       string    `json:"job_id"`
	TaskID      string    `json:"task_id"`
	State       State     `json:"state"`
	Error       string    `json:"error,omitempty"` // FAILED and TIMEOUT only
	CreatedAt   time.Time `json:"created_at,omitzero"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// ExpiresAt is set on a terminal job only: when retention's TTL may
	// evict it (completed_at + the server's async_job_ttl). The server's
	// async_max_completed may evict it earlier. Zero when the TTL is
	// unknown or disabled.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Result answers GET /jobs/{id}/result: a DONE job's result, as the model
// returned it.
type Result struct {
	JobID  string          `json:"job_id"`
	TaskID string          `json:"task_id"`
	State  State           `json:"state"`
	Result json.RawMessage `json:"result"`
}

// InferResult answers POST /infer.
type InferResult struct {
	TaskID string          `json:"task_id"`
	Result json.RawMessage `json:"result"`
}

// Page is one page of GET /jobs.
type Page struct {
	Jobs []Snapshot `json:"jobs"` // newest first
	// NextCursor resumes the walk as the cursor parameter. Empty on the
	// last page. A page may hold fewer jobs than its limit, even none,
	// while NextCursor is set.
	NextCursor string `json:"next_cursor,omitempty"`
}
