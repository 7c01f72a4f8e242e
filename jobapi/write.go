package jobapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// newSnapshotBody converts a ledger snapshot to its wire form: times in UTC
// RFC 3339, absent until set; error only for FAILED and TIMEOUT; expires_at
// only for a terminal job of a store whose JobTTL ttl is positive.
func newSnapshotBody(s ledger.Snapshot, ttl time.Duration) wire.Snapshot {
	b := wire.Snapshot{JobID: s.ID, TaskID: s.TaskID, State: wireState(s.State)}
	if s.Err != nil && (s.State == ledgertype.Failed || s.State == ledgertype.TimedOut) {
		b.Error = s.Err.Error()
	}
	b.CreatedAt = wireTime(s.CreatedAt)
	b.StartedAt = wireTime(s.StartedAt)
	b.CompletedAt = wireTime(s.CompletedAt)
	if ttl > 0 && s.State.Terminal() && !s.CompletedAt.IsZero() {
		b.ExpiresAt = wireTime(s.CompletedAt.Add(ttl))
	}
	return b
}

// wireState is s as the API names it.
func wireState(s ledger.State) wire.State { return wire.State(s.String()) }

// wireTime is t in UTC, or the zero time (omitted) when t is not set.
func wireTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// writeJSON writes v as the JSON body of a reply with the given status. v
// must marshal: its callers pass values that always do (a map of strings,
// an /infer result that runModel marshalled). A job's stored result may
// not, and goes through writeResult.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic("jobapi: writeJSON of a value that does not marshal: " + err.Error())
	}
	writeBody(w, status, data)
}

// writeResult answers 200 with b, the result of a DONE job. A stored
// result that does not marshal (a store of any codec can hand one back) is a stored value that no longer decodes, a store failure:
// writeResult then writes nothing and returns the error, for the caller to
// answer as such. The encoding is written from the encoder's own buffer,
// not copied out of it first: a large result is held once encoded, not
// twice (replies.go counts it).
func writeResult(w http.ResponseWriter, b wire.Result) error {
	w.Header().Set("Content-Type", "application/json")
	sw := &sentWriter{w: w}
	if err := json.NewEncoder(sw).Encode(b); err != nil && !sw.sent {
		return fmt.Errorf("jobapi: the stored result of job %s is not JSON: %w", b.JobID, err)
	}
	return nil // or the client went away
}

// sentWriter is w, remembering whether anything was written to it.
type sentWriter struct {
	w    io.Writer
	sent bool
}

func (s *sentWriter) Write(p []byte) (int, error) {
	s.sent = true
	return s.w.Write(p)
}

// writeBody writes data, a JSON value, as the body of a reply.
func writeBody(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n')) // the client went away
}
