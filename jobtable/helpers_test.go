package jobtable_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/internal/invariant"
	"github.com/jobledger/jobledger/jobtable"
)

type req struct{ payload string }

type table = jobtable.Table[req, string]

var errBoom = errors.New("boom")

// newTable returns a table on a fake clock with sequential ids j1, j2, ...
// Its invariants are checked when the test ends.
func newTable(t testing.TB, cfg jobtable.Config) (*table, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New()
	cfg.Now = clock.Now
	if cfg.NewID == nil {
		cfg.NewID = fakeclock.Seq("j")
	}
	tab, err := jobtable.New[req, string](cfg)
	require.NoError(t, err)
	t.Cleanup(func() { checkInvariants(t, tab) })
	return tab, clock
}

func checkInvariants(t testing.TB, tab *table) {
	t.Helper()
	if err := invariant.Check(tab); err != nil {
		t.Fatalf("invariants violated:\n%v", err)
	}
}

func mustSubmit(t testing.TB, tab *table, taskID string) string {
	t.Helper()
	id, err := tab.Submit(taskID, req{payload: "payload of " + taskID})
	require.NoError(t, err)
	return id
}

// toState submits a job and drives it into state s.
func toState(t testing.TB, tab *table, s jobtable.State) string {
	t.Helper()
	id := mustSubmit(t, tab, "task")
	switch s {
	case jobtable.Pending:
	case jobtable.Running:
		require.NoError(t, errOf(tab.Start(id)))
	case jobtable.Done:
		require.NoError(t, errOf(tab.Start(id)))
		require.NoError(t, errOf(tab.Finish(id, "result")))
	case jobtable.Failed:
		require.NoError(t, errOf(tab.Fail(id, errBoom)))
	case jobtable.TimedOut:
		require.NoError(t, errOf(tab.Timeout(id, errBoom)))
	default:
		t.Fatalf("no such state %v", s)
	}
	return id
}

// errOf is the error of a transition, for asserting on it alone.
func errOf(_ jobtable.Snapshot, err error) error { return err }

func state(t testing.TB, tab *table, id string) jobtable.State {
	t.Helper()
	snap, err := tab.Snapshot(id)
	require.NoError(t, err)
	return snap.State
}

const second = time.Second

func awaitWaiter(t testing.TB, tab *table, id string) {
	t.Helper()
	jobtable.AwaitWaiter(t, tab, id)
}
