package fuzz

import (
	"fmt"
	"strings"
	"time"

	"github.com/jobledger/jobledger/jobtable"
)

// sameSnapshot reports whether a and b are the same view: the same error
// value (not only the same message) and the same instants.
func sameSnapshot(a, b jobtable.Snapshot) bool {
	return a.ID == b.ID && a.TaskID == b.TaskID && a.State == b.State && a.Err == b.Err &&
		a.CreatedAt.Equal(b.CreatedAt) && a.StartedAt.Equal(b.StartedAt) && a.CompletedAt.Equal(b.CompletedAt)
}

func showSnapshot(s jobtable.Snapshot) string {
	if s == (jobtable.Snapshot{}) {
		return "{}"
	}
	return fmt.Sprintf("{%s task=%s %s err=%v created=%s started=%s completed=%s}",
		s.ID, s.TaskID, s.State, s.Err, clockTime(s.CreatedAt), clockTime(s.StartedAt), clockTime(s.CompletedAt))
}

// clockTime shows t's time of day, or "-" for the zero time.
func clockTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("15:04:05.000")
}

func joinLines(lines []string) string { return strings.Join(lines, "\n  ") }
