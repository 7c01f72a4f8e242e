package jobtable_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// TestTransitions applies every transition to a job in every state and
// checks the error, the resulting state and the queue depth.
func TestTransitions(t *testing.T) {
	type op struct {
		name string
		to   jobtable.State // the state the op moves to when allowed
		do   func(*table, string) error
	}
	ops := []op{
		{"Start", ledgertype.Running, func(tab *table, id string) error { return errOf(tab.Start(id)) }},
		{"Finish", ledgertype.Done, func(tab *table, id string) error { return errOf(tab.Finish(id, "again")) }},
		{"Fail", ledgertype.Failed, func(tab *table, id string) error { return errOf(tab.Fail(id, errBoom)) }},
		{"Timeout", ledgertype.TimedOut, func(tab *table, id string) error { return errOf(tab.Timeout(id, errBoom)) }},
	}
	states := []jobtable.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut}
	// want[from][op] is the error each op returns from each state.
	want := map[jobtable.State]map[string]error{
		ledgertype.Pending:  {"Start": nil, "Finish": nil, "Fail": nil, "Timeout": nil},
		ledgertype.Running:  {"Start": jobtable.ErrNotPending, "Finish": nil, "Fail": nil, "Timeout": nil},
		ledgertype.Done:     {"Start": jobtable.ErrNotPending, "Finish": jobtable.ErrTerminal, "Fail": jobtable.ErrTerminal, "Timeout": jobtable.ErrTerminal},
		ledgertype.Failed:   {"Start": jobtable.ErrNotPending, "Finish": jobtable.ErrTerminal, "Fail": jobtable.ErrTerminal, "Timeout": jobtable.ErrTerminal},
		ledgertype.TimedOut: {"Start": jobtable.ErrNotPending, "Finish": jobtable.ErrTerminal, "Fail": jobtable.ErrTerminal, "Timeout": jobtable.ErrTerminal},
	}
	for _, from := range states {
		for _, o := range ops {
			t.Run(from.String()+"/"+o.name, func(t *testing.T) {
				tab, _ := newTable(t, jobtable.Config{MaxQueue: 4})
				id := toState(t, tab, from)
				before, err := tab.Snapshot(id)
				require.NoError(t, err)
				depthBefore := tab.Depth()

				err = o.do(tab, id)
				require.ErrorIs(t, err, want[from][o.name])

				after, err := tab.Snapshot(id)
				require.NoError(t, err)
				if want[from][o.name] != nil {
					require.Equal(t, before, after, "a refused transition changes nothing")
					require.Equal(t, depthBefore, tab.Depth())
					return
				}
				require.Equal(t, o.to, after.State)
				if o.to.Terminal() {
					require.Equal(t, depthBefore-1, tab.Depth(), "the terminal transition decrements depth once")
				} else {
					require.Equal(t, depthBefore, tab.Depth())
				}
			})
		}
	}
}

func TestSecondTerminalCallIsNoOp(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 2})
	id := mustSubmit(t, tab, "a")
	require.NoError(t, errOf(tab.Finish(id, "first")))
	require.Equal(t, 0, tab.Depth())

	require.ErrorIs(t, errOf(tab.Finish(id, "second")), jobtable.ErrTerminal)
	require.ErrorIs(t, errOf(tab.Fail(id, errBoom)), jobtable.ErrTerminal)
	require.ErrorIs(t, errOf(tab.Timeout(id, errBoom)), jobtable.ErrTerminal)
	require.Equal(t, 0, tab.Depth(), "depth is decremented exactly once")

	res, snap, err := tab.Result(id)
	require.NoError(t, err)
	require.Equal(t, "first", res)
	require.Equal(t, ledgertype.Done, snap.State)
	require.NoError(t, snap.Err)
}

func TestTimestampsAndErrors(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 2})
	t0 := clock.Now()
	id := mustSubmit(t, tab, "a")
	snap, err := tab.Snapshot(id)
	require.NoError(t, err)
	require.Equal(t, jobtable.Snapshot{ID: id, TaskID: "a", State: ledgertype.Pending, CreatedAt: t0}, snap)

	clock.Advance(second)
	require.NoError(t, errOf(tab.Start(id)))
	clock.Advance(second)
	require.NoError(t, errOf(tab.Fail(id, errBoom)))

	snap, err = tab.Snapshot(id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.ErrorIs(t, snap.Err, errBoom)
	require.Equal(t, t0, snap.CreatedAt)
	require.Equal(t, t0.Add(second), snap.StartedAt)
	require.Equal(t, t0.Add(2*second), snap.CompletedAt)
}

func TestStateIsTheSnapshotsState(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 8})
	for _, want := range []jobtable.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		id := toState(t, tab, want)
		got, err := tab.State(id)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func TestUnknownID(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	const id = "no-such-job"
	_, err := tab.Snapshot(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	_, err = tab.State(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	require.ErrorIs(t, errOf(tab.Start(id)), jobtable.ErrNotFound)
	require.ErrorIs(t, errOf(tab.Finish(id, "x")), jobtable.ErrNotFound)
	require.ErrorIs(t, errOf(tab.Fail(id, errBoom)), jobtable.ErrNotFound)
	require.ErrorIs(t, errOf(tab.Timeout(id, errBoom)), jobtable.ErrNotFound)
	_, err = tab.TakeRequest(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	_, _, err = tab.Result(id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	_, err = tab.Wait(t.Context(), id)
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	require.Equal(t, 0, tab.Depth())
	require.Equal(t, 0, tab.Len())
}

func TestTakeRequestOnce(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
	id := mustSubmit(t, tab, "task-7")

	r, err := tab.TakeRequest(id)
	require.NoError(t, err)
	require.Equal(t, req{payload: "payload of task-7"}, r)

	_, err = tab.TakeRequest(id)
	require.ErrorIs(t, err, jobtable.ErrRequestTaken)

	// The task id outlives the payload, so the result can echo it.
	require.NoError(t, errOf(tab.Start(id)))
	require.NoError(t, errOf(tab.Finish(id, "ok")))
	_, snap, err := tab.Result(id)
	require.NoError(t, err)
	require.Equal(t, "task-7", snap.TaskID)
}

func TestResult(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 4})
	for _, s := range []jobtable.State{ledgertype.Pending, ledgertype.Running, ledgertype.Failed, ledgertype.TimedOut} {
		id := toState(t, tab, s)
		_, snap, err := tab.Result(id)
		require.ErrorIs(t, err, jobtable.ErrNotDone, s.String())
		require.Equal(t, s, snap.State, "ErrNotDone comes with the job's state")
	}
	id := toState(t, tab, ledgertype.Done)
	for range 3 {
		res, snap, err := tab.Result(id)
		require.NoError(t, err, "Result is repeatable")
		require.Equal(t, "result", res)
		require.Equal(t, ledgertype.Done, snap.State)
	}
}

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
