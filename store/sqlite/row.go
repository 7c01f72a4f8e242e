package sqlite

import (
	"database/sql"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// How a job's fields are stored, and read back:
//
//   - a time is Unix nanoseconds, NULL while unset; it is read back in UTC,
//     without a monotonic reading;
//   - an error is its message, NULL for none, read back as an error with
//     that message (errors.Is against the original no longer holds: a
//     stored error outlives the values it wrapped);
//   - a request or result is its bytes; a nil request is stored as an
//     empty one, so that NULL means released.

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanSnapshot reads the columns snapCols, then extra, from sc.
func scanSnapshot(sc scanner, extra ...any) (ledger.Snapshot, error) {
	var (
		snap                        ledger.Snapshot
		state                       int64
		message                     sql.NullString
		created, started, completed sql.NullInt64
	)
	dest := append([]any{&snap.ID, &snap.TaskID, &state, &message, &created, &started, &completed}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return ledger.Snapshot{}, err
	}
	snap.State = ledger.State(state)
	if message.Valid {
		snap.Err = ledger.CauseFromText(message.String)
	}
	snap.CreatedAt = fromNanos(created)
	snap.StartedAt = fromNanos(started)
	snap.CompletedAt = fromNanos(completed)
	return snap, nil
}

// fromNanos is the time stored as n, or the zero time for NULL.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// errText is the stored form of a job's error (ledger.CauseText).
func errText(cause error) *string {
	s := ledger.CauseText(cause)
	return &s
}
