package postgres

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// The payload of an end's notification is the job's id, then, after a
// newline, its final snapshot as JSON, so that a woken waiter has the
// outcome even if retention evicts the job before it could read it. Each
// payload names its job, so PostgreSQL never merges two (it merges
// identical payloads of one transaction). PostgreSQL limits a payload to
// 8000 bytes: a snapshot too big for it (a huge task id or error message)
// is left out, and the waiter reads the row instead.

const maxPayload = 7900

type wireSnapshot struct {
	TaskID    string  `json:"t"`
	State     int     `json:"s"`
	Err       *string `json:"e,omitempty"`
	Created   int64   `json:"c"`
	Started   int64   `json:"b,omitempty"`
	Completed int64   `json:"d"`
}

// notifyPayload is the notification of snap's end.
func notifyPayload(snap ledger.Snapshot) string {
	w := wireSnapshot{TaskID: snap.TaskID, State: int(snap.State), Created: snap.CreatedAt.UnixNano(), Completed: snap.CompletedAt.UnixNano()}
	if !snap.StartedAt.IsZero() {
		w.Started = snap.StartedAt.UnixNano()
	}
	if snap.Err != nil {
		msg := snap.Err.Error()
		w.Err = &msg
	}
	b, err := json.Marshal(w)
	if err != nil || len(snap.ID)+1+len(b) > maxPayload {
		return snap.ID
	}
	return snap.ID + "\n" + string(b)
}

// parsePayload is notifyPayload's inverse: the job's id, and its final
// snapshot if the payload carries one (nil otherwise).
func parsePayload(p string) (string, *ledger.Snapshot) {
	id, rest, ok := strings.Cut(p, "\n")
	if !ok {
		return id, nil
	}
	var w wireSnapshot
	if err := json.Unmarshal([]byte(rest), &w); err != nil || !ledger.State(w.State).Terminal() {
		return id, nil
	}
	snap := ledger.Snapshot{ID: id, TaskID: w.TaskID, State: ledger.State(w.State),
		CreatedAt: time.Unix(0, w.Created).UTC(), CompletedAt: time.Unix(0, w.Completed).UTC()}
	if w.Started != 0 {
		snap.StartedAt = time.Unix(0, w.Started).UTC()
	}
	if w.Err != nil {
		snap.Err = errors.New(*w.Err)
	}
	return id, &snap
}
