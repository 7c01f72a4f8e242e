package jobtable_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// TestTransitionsReturnTheirSnapshot pins the 404 of a cancel that had
// succeeded: callers ended a job and then looked it up again to report it,
// and a Submit could evict the job in between. Every transition now returns
// the snapshot taken in its own critical section; a refused one returns the
// job's current snapshot, naming the state that refused it.
func TestTransitionsReturnTheirSnapshot(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 2, JobTTL: second})
	t0 := clock.Now()
	id := mustSubmit(t, tab, "a")

	clock.Advance(second)
	started, err := tab.Start(id)
	require.NoError(t, err)
	require.Equal(t, jobtable.Snapshot{ID: id, TaskID: "a", State: ledgertype.Running,
		CreatedAt: t0, StartedAt: t0.Add(second)}, started)

	clock.Advance(second)
	ended, err := tab.Fail(id, errBoom)
	require.NoError(t, err)
	require.Equal(t, jobtable.Snapshot{ID: id, TaskID: "a", State: ledgertype.Failed, Err: errBoom,
		CreatedAt: t0, StartedAt: t0.Add(second), CompletedAt: t0.Add(2 * second)}, ended)

	for name, call := range map[string]func() (jobtable.Snapshot, error){
		"Finish":  func() (jobtable.Snapshot, error) { return tab.Finish(id, "late") },
		"Fail":    func() (jobtable.Snapshot, error) { return tab.Fail(id, errors.New("late")) },
		"Timeout": func() (jobtable.Snapshot, error) { return tab.Timeout(id, errors.New("late")) },
	} {
		snap, err := call()
		require.ErrorIs(t, err, jobtable.ErrTerminal, name)
		require.Equal(t, ended, snap, "%s: a refused call returns the terminal snapshot", name)
	}
	snap, err := tab.Start(id)
	require.ErrorIs(t, err, jobtable.ErrNotPending)
	require.Equal(t, ended, snap)

	// The snapshot outlives the job: once its TTL has passed, the next
	// Submit evicts it.
	clock.Advance(second)
	mustSubmit(t, tab, "b")
	_, err = tab.Snapshot(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	require.Equal(t, ledgertype.Failed, ended.State)

	for _, call := range []func() (jobtable.Snapshot, error){
		func() (jobtable.Snapshot, error) { return tab.Start(id) },
		func() (jobtable.Snapshot, error) { return tab.Finish(id, "x") },
		func() (jobtable.Snapshot, error) { return tab.Fail(id, errBoom) },
		func() (jobtable.Snapshot, error) { return tab.Timeout(id, errBoom) },
	} {
		snap, err := call()
		require.ErrorIs(t, err, jobtable.ErrNotFound)
		require.Zero(t, snap)
	}
}
