package ledgertest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// op is one transition of the state machine, as the suite applies it.
type op struct {
	name string
	to   ledger.State // the state it moves to when allowed
	do   func(f *fixture, id string) (ledger.Snapshot, error)
}

var ops = []op{
	{"Start", ledgertype.Running, func(f *fixture, id string) (ledger.Snapshot, error) { return f.l.Start(f.ctx, id) }},
	{"Finish", ledgertype.Done, func(f *fixture, id string) (ledger.Snapshot, error) { return f.l.Finish(f.ctx, id, "again") }},
	{"Fail", ledgertype.Failed, func(f *fixture, id string) (ledger.Snapshot, error) { return f.l.Fail(f.ctx, id, errBoom) }},
	{"Timeout", ledgertype.TimedOut, func(f *fixture, id string) (ledger.Snapshot, error) { return f.l.Timeout(f.ctx, id, errBoom) }},
}

var states = []ledger.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut}

// testStateMachine applies every transition to a job in every state and
// checks the error, the snapshot returned, the job afterwards and the
// depth: only PENDING may enter RUNNING, any live job may end, and a
// refused transition returns the current snapshot and changes nothing.
func testStateMachine(t *testing.T, s Store) {
	terminal := map[string]error{"Start": ledger.ErrNotPending, "Finish": ledger.ErrTerminal, "Fail": ledger.ErrTerminal, "Timeout": ledger.ErrTerminal}
	want := map[ledger.State]map[string]error{
		ledgertype.Pending:  {"Start": nil, "Finish": nil, "Fail": nil, "Timeout": nil},
		ledgertype.Running:  {"Start": ledger.ErrNotPending, "Finish": nil, "Fail": nil, "Timeout": nil},
		ledgertype.Done:     terminal,
		ledgertype.Failed:   terminal,
		ledgertype.TimedOut: terminal,
	}
	for _, from := range states {
		for _, o := range ops {
			t.Run(from.String()+"/"+o.name, func(t *testing.T) {
				f := open(t, s, ledger.Config{MaxQueue: 4})
				id := f.toState(from)
				before := f.snapshot(id)
				depth := f.depth()
				f.clock.Advance(time.Second)
				now := f.clock.Now()

				got, err := o.do(f, id)
				require.ErrorIs(t, err, want[from][o.name])
				after := f.snapshot(id)
				if want[from][o.name] != nil {
					requireSame(t, before, got, "a refused transition returns the job's current snapshot")
					requireSame(t, before, after, "a refused transition changes nothing")
					require.Equal(t, depth, f.depth())
					return
				}
				requireSame(t, after, got, "a transition returns the snapshot it produced")
				require.Equal(t, o.to, got.State)
				require.True(t, got.CreatedAt.Equal(before.CreatedAt))
				switch {
				case o.to == ledgertype.Running:
					require.True(t, got.StartedAt.Equal(now), "StartedAt is the time of Start")
					require.True(t, got.CompletedAt.IsZero())
					require.Equal(t, depth, f.depth(), "Start does not free a slot")
				default:
					require.True(t, got.CompletedAt.Equal(now), "CompletedAt is the time of the end")
					require.True(t, got.StartedAt.Equal(before.StartedAt), "the end keeps StartedAt")
					require.Equal(t, depth-1, f.depth(), "the end frees one slot")
				}
				if o.to == ledgertype.Failed || o.to == ledgertype.TimedOut {
					require.EqualError(t, got.Err, errBoom.Error())
				} else {
					require.NoError(t, got.Err)
				}
			})
		}
	}
}

// testTerminalAbsorbing: once a job ended, every transition is refused
// with the job's terminal snapshot, its result stays the first one, and
// the depth fell once.
func testTerminalAbsorbing(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	id := f.submit("a")
	ended, err := f.l.Finish(f.ctx, id, "first")
	require.NoError(t, err)
	require.Equal(t, 0, f.depth())
	f.clock.Advance(time.Second)

	for _, o := range ops {
		snap, err := o.do(f, id)
		if o.name == "Start" {
			require.ErrorIs(t, err, ledger.ErrNotPending)
		} else {
			require.ErrorIs(t, err, ledger.ErrTerminal, o.name)
		}
		requireSame(t, ended, snap, "%s on a terminal job returns its terminal snapshot", o.name)
	}
	require.Equal(t, 0, f.depth(), "the depth fell exactly once")
	res, snap, err := f.l.Result(f.ctx, id)
	require.NoError(t, err)
	require.Equal(t, "first", res)
	requireSame(t, ended, snap)
}

// testTransitionsReturnTheirSnapshot follows one job through its life and
// checks each snapshot a transition returns, whole; the snapshot outlives
// the job's eviction.
func testTransitionsReturnTheirSnapshot(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2, JobTTL: time.Second})
	t0 := f.clock.Now()
	id := f.submit("a")
	requireSame(t, ledger.Snapshot{ID: id, TaskID: "a", State: ledgertype.Pending, CreatedAt: t0}, f.snapshot(id))

	f.clock.Advance(time.Second)
	started, err := f.l.Start(f.ctx, id)
	require.NoError(t, err)
	requireSame(t, ledger.Snapshot{ID: id, TaskID: "a", State: ledgertype.Running,
		CreatedAt: t0, StartedAt: t0.Add(time.Second)}, started)

	f.clock.Advance(time.Second)
	ended, err := f.l.Fail(f.ctx, id, errBoom)
	require.NoError(t, err)
	requireSame(t, ledger.Snapshot{ID: id, TaskID: "a", State: ledgertype.Failed, Err: errBoom,
		CreatedAt: t0, StartedAt: t0.Add(time.Second), CompletedAt: t0.Add(2 * time.Second)}, ended)

	f.clock.Advance(time.Second) // past the TTL: the next Submit evicts the job
	f.submit("b")
	require.False(t, f.held(id))
	require.Equal(t, ledgertype.Failed, ended.State, "the snapshot outlives the job")
	for _, o := range ops {
		_, err := o.do(f, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, o.name)
	}
}

// testStateIsTheSnapshotsState: State, the cheap poll, agrees with
// Snapshot in every state.
func testStateIsTheSnapshotsState(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8})
	for _, want := range states {
		id := f.toState(want)
		got, err := f.l.State(f.ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, want, f.snapshot(id).State)
	}
}

// testUnknownID: every call on an id the store never issued returns
// ErrNotFound and changes nothing, also for ids no store issues and some
// databases cannot hold (invalid UTF-8, a NUL byte); LookupKey of such a
// key is ErrNotFound, and List with such a task id an empty page.
func testUnknownID(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	f.submit("t")
	for _, id := range []string{"no-such-job", "\xff", "a\x00", "a\x00b"} {
		_, err := f.l.Snapshot(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "Snapshot(%q)", id)
		_, err = f.l.State(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "State(%q)", id)
		for _, o := range ops {
			_, err := o.do(f, id)
			require.ErrorIs(t, err, ledger.ErrNotFound, "%s(%q)", o.name, id)
		}
		_, err = f.l.TakeRequest(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "TakeRequest(%q)", id)
		_, _, err = f.l.Result(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "Result(%q)", id)
		_, err = f.l.Wait(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "Wait(%q)", id)
		_, _, err = f.l.LookupKey(f.ctx, "", id)
		require.ErrorIs(t, err, ledger.ErrNotFound, "LookupKey(%q)", id)
		page, err := f.l.List(f.ctx, ledger.ListQuery{ByTaskID: true, TaskID: id})
		require.NoError(t, err, "List(TaskID %q)", id)
		require.Empty(t, page.Jobs, "List(TaskID %q)", id)
		require.Empty(t, page.Next, "List(TaskID %q)", id)
	}
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 1}, f.l.Stats())
}

// testUniqueIDs: the store's own ids are never repeated, and carry at
// least 128 bits if they are base32 (as the memory store's are); a store
// with other ids only needs them unique.
func testUniqueIDs(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 200})
	seen := map[string]bool{}
	for range 200 {
		id := f.submit("t")
		require.False(t, seen[id], "id %q issued twice", id)
		seen[id] = true
	}
}

// testResultOnlyWhenDone: Result answers ErrNotDone, with the job's
// snapshot, in every state but DONE, and a DONE job's result as often as
// it is asked.
func testResultOnlyWhenDone(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	for _, st := range []ledger.State{ledgertype.Pending, ledgertype.Running, ledgertype.Failed, ledgertype.TimedOut} {
		id := f.toState(st)
		_, snap, err := f.l.Result(f.ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotDone, st.String())
		requireSame(t, f.snapshot(id), snap, "ErrNotDone comes with the job's snapshot")
	}
	id := f.toState(ledgertype.Done)
	for range 3 {
		res, snap, err := f.l.Result(f.ctx, id)
		require.NoError(t, err, "Result is repeatable")
		require.Equal(t, "result", res)
		require.Equal(t, ledgertype.Done, snap.State)
		require.Equal(t, "task", snap.TaskID)
	}
}

// testTimestampsAndErrors: each transition stamps the time of the clock
// it was given, and a failure keeps its cause's message.
func testTimestampsAndErrors(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	t0 := f.clock.Now()
	id := f.submit("a")
	f.clock.Advance(time.Second)
	f.must(f.l.Start(f.ctx, id))
	f.clock.Advance(time.Second)
	f.must(f.l.Timeout(f.ctx, id, errors.New("deadline exceeded")))

	requireSame(t, ledger.Snapshot{ID: id, TaskID: "a", State: ledgertype.TimedOut, Err: errors.New("deadline exceeded"),
		CreatedAt: t0, StartedAt: t0.Add(time.Second), CompletedAt: t0.Add(2 * time.Second)}, f.snapshot(id))
}

// testNilCause: a job failed or timed out with a nil cause carries
// ErrNoCause, which errors.Is finds on every store: in the
// snapshot the end returns, in every read after it, in a wait's answer,
// and after a restart where the store survives one. A FAILED or TIMEOUT job
// always has an error (PayloadConsistencyInv), and never the text of a nil
// error.
func testNilCause(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	ends := map[ledger.State]func(id string) (ledger.Snapshot, error){
		ledgertype.Failed:   func(id string) (ledger.Snapshot, error) { return f.l.Fail(f.ctx, id, nil) },
		ledgertype.TimedOut: func(id string) (ledger.Snapshot, error) { return f.l.Timeout(f.ctx, id, nil) },
	}
	noCause := func(snap ledger.Snapshot, state ledger.State, what string) {
		t.Helper()
		require.Equal(t, state, snap.State, what)
		require.ErrorIs(t, snap.Err, ledger.ErrNoCause, what)
	}
	ids := map[ledger.State]string{}
	for state, end := range ends {
		id := f.submit("task")
		got, err := end(id)
		require.NoError(t, err)
		noCause(got, state, "the snapshot the end returns")
		waited, err := f.l.Wait(f.ctx, id)
		require.NoError(t, err)
		noCause(waited, state, "a wait's answer")
		ids[state] = id
	}
	for state, id := range ids {
		noCause(f.snapshot(id), state, "a read after the end")
	}
	if s.Restart != nil {
		f.restart()
		for state, id := range ids {
			noCause(f.snapshot(id), state, "a read after a restart")
		}
	}
}
