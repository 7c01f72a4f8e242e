package jobtable_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
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
	if err := tab.CheckInvariants(); err != nil {
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
	case ledgertype.Pending:
	case ledgertype.Running:
		require.NoError(t, errOf(tab.Start(id)))
	case ledgertype.Done:
		require.NoError(t, errOf(tab.Start(id)))
		require.NoError(t, errOf(tab.Finish(id, "result")))
	case ledgertype.Failed:
		require.NoError(t, errOf(tab.Fail(id, errBoom)))
	case ledgertype.TimedOut:
		require.NoError(t, errOf(tab.Timeout(id, errBoom)))
	default:
		t.Fatalf("no such state %v", s)
	}
	return id
}

// errOf is the error of a transition, for asserting on it alone.
func errOf(_ jobtable.Snapshot, err error) error { return err }

const second = time.Second

func awaitWaiter(t testing.TB, tab *table, id string) {
	t.Helper()
	jobtable.AwaitWaiter(t, tab, id)
}

// lostWakeupGrace bounds how long a waiter may take to return once the job
// it waits on is terminal. A correct table never comes near it: a lost
// wakeup is caught at once by awaitReturn, through the invariants, and the
// grace only ends a run whose waiter is stuck in a way they cannot see.
const lostWakeupGrace = 10 * time.Second

// awaitReturn receives from got, the channel on which waiters report that
// they returned, checking the table's invariants as it waits. A waiter that
// took the wakeup channel of a job already terminal (D4) breaks
// NoLostWakeupInv the moment it does, so a lost wakeup fails at once rather
// than after lostWakeupGrace. Only waiters may be running: the invariants
// are exact when no Submit is in flight.
func awaitReturn[T any](t testing.TB, tab *table, got <-chan T) (T, error) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	grace := time.NewTimer(lostWakeupGrace)
	defer grace.Stop()
	for {
		select {
		case v := <-got:
			return v, nil
		case <-grace.C:
			var zero T
			return zero, fmt.Errorf("a waiter is still blocked %v after its job ended (lost wakeup)", lostWakeupGrace)
		case <-tick.C:
			if err := tab.CheckInvariants(); err != nil {
				var zero T
				return zero, fmt.Errorf("a waiter is blocked on an ended job (lost wakeup): %w", err)
			}
		}
	}
}
