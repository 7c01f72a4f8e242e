package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// The payload of an end's notification is the job's id, then, after a
// newline, its final snapshot and its completion seq as JSON, so that a
// woken waiter has the outcome even if retention evicts the job before it
// could read it. Each payload names its job, so PostgreSQL never merges
// two (it merges identical payloads of one transaction). PostgreSQL
// limits a payload to 8000 bytes: a snapshot too big for it (a huge task
// id or error message) is left out, the seq alone sent, and the waiter
// reads the row instead. The seq lets the listener tell which ends it has
// reported to OnEnd (listen.go).

const maxPayload = 7900

type wireSnapshot struct {
	TaskID    string  `json:"t"`
	Tenant    string  `json:"n,omitempty"`
	State     int     `json:"s"`
	Err       *string `json:"e,omitempty"`
	Created   int64   `json:"c"`
	Started   int64   `json:"b,omitempty"`
	Completed int64   `json:"d"`
	Seq       int64   `json:"q"`
}

// notifyPayload is the notification of snap's end, with completion seq
// seq.
func notifyPayload(snap ledger.Snapshot, seq int64) string {
	w := wireSnapshot{TaskID: snap.TaskID, Tenant: snap.Tenant, State: int(snap.State), Created: snap.CreatedAt.UnixNano(),
		Completed: snap.CompletedAt.UnixNano(), Seq: seq}
	if !snap.StartedAt.IsZero() {
		w.Started = snap.StartedAt.UnixNano()
	}
	if snap.Err != nil {
		msg := snap.Err.Error()
		w.Err = &msg
	}
	b, err := json.Marshal(w)
	if err != nil || len(snap.ID)+1+len(b) > maxPayload {
		return snap.ID + "\n" + fmt.Sprintf(`{"q":%d}`, seq)
	}
	return snap.ID + "\n" + string(b)
}

// parsePayload is notifyPayload's inverse: the job's id, its final
// snapshot if the payload carries one (nil otherwise), and its seq (0 if
// the payload has none).
func parsePayload(p string) (string, *ledger.Snapshot, int64) {
	id, rest, ok := strings.Cut(p, "\n")
	if !ok {
		return id, nil, 0
	}
	var w wireSnapshot
	if err := json.Unmarshal([]byte(rest), &w); err != nil {
		return id, nil, 0
	}
	if !ledger.State(w.State).Terminal() {
		return id, nil, w.Seq
	}
	snap := ledger.Snapshot{ID: id, TaskID: w.TaskID, Tenant: w.Tenant, State: ledger.State(w.State),
		CreatedAt: time.Unix(0, w.Created).UTC(), CompletedAt: time.Unix(0, w.Completed).UTC()}
	if w.Started != 0 {
		snap.StartedAt = time.Unix(0, w.Started).UTC()
	}
	if w.Err != nil {
		snap.Err = ledger.CauseFromText(*w.Err)
	}
	return id, &snap, w.Seq
}
