package ledgertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// Snapshots compared store-neutrally, and the views no store may show.

// requireSame fails t unless got is the snapshot want, comparing times
// with Equal and errors by message (see the package doc).
func requireSame(t testing.TB, want, got ledger.Snapshot, msgAndArgs ...any) {
	t.Helper()
	if err := sameSnapshot(want, got); err != nil {
		require.Fail(t, fmt.Sprintf("%v\nwant %s\n got %s", err, describe(want), describe(got)), msgAndArgs...)
	}
}

// sameSnapshot reports how got differs from want, or nil.
func sameSnapshot(want, got ledger.Snapshot) error {
	var errs []error
	diff := func(field string, w, g any) { errs = append(errs, fmt.Errorf("%s: want %v, got %v", field, w, g)) }
	if want.ID != got.ID {
		diff("ID", want.ID, got.ID)
	}
	if want.TaskID != got.TaskID {
		diff("TaskID", want.TaskID, got.TaskID)
	}
	if want.State != got.State {
		diff("State", want.State, got.State)
	}
	if errText(want.Err) != errText(got.Err) {
		diff("Err", want.Err, got.Err)
	}
	for _, tm := range []struct {
		name string
		w, g time.Time
	}{{"CreatedAt", want.CreatedAt, got.CreatedAt}, {"StartedAt", want.StartedAt, got.StartedAt}, {"CompletedAt", want.CompletedAt, got.CompletedAt}} {
		if !tm.w.Equal(tm.g) {
			diff(tm.name, tm.w, tm.g)
		}
	}
	return errors.Join(errs...)
}

// errText is err's message, "<nil>" for none.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func describe(s ledger.Snapshot) string {
	return fmt.Sprintf("{%s task=%q %v err=%s created=%v started=%v completed=%v}",
		s.ID, s.TaskID, s.State, errText(s.Err), s.CreatedAt, s.StartedAt, s.CompletedAt)
}
