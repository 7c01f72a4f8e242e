package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// testRestart runs the restart rules, for a store that survives one.
func testRestart(t *testing.T, s Store) {
	if s.Restart == nil {
		t.Skip("the store does not survive a restart (Store.Restart is nil): nothing to check")
	}
	for _, r := range []struct {
		name string
		run  func(*testing.T, Store)
	}{
		{"PendingStaysPending", testRestartPending},
		{"RunningEndsFailed", testRestartRunning},
		{"TerminalKeepsStateAndResult", testRestartTerminal},
		{"DepthIsTheLiveJobs", testRestartDepth},
		{"AdmissionBoundHolds", testRestartAdmission},
		{"TTLFromStoredCompletion", testRestartTTL},
		{"LRUOrderKept", testRestartLRU},
		{"IDsStayUnique", testRestartIDs},
	} {
		t.Run(r.name, func(t *testing.T) { r.run(t, s) })
	}
}

// testRestartPending: a PENDING job stays PENDING across restarts, its
// snapshot unchanged; Recovered lists every one, oldest first, and the
// caller can take its request and run it.
func testRestartPending(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8})
	var pending []ledger.Snapshot
	for _, task := range []string{"a", "b", "c"} {
		pending = append(pending, f.snapshot(f.submit(task)))
		f.clock.Advance(time.Second)
	}
	f.toState(ledgertype.Running)
	f.toState(ledgertype.Done)

	for restart := range 2 {
		f.clock.Advance(time.Minute)
		f.restart()
		rec := f.recovered()
		require.Len(t, rec, len(pending), "restart %d: Recovered lists the PENDING jobs", restart)
		for i, want := range pending {
			requireSame(t, want, rec[i], "restart %d: Recovered[%d], oldest first", restart, i)
			requireSame(t, want, f.snapshot(want.ID), "restart %d: the job is unchanged", restart)
		}
	}

	id := pending[0].ID
	req, err := f.l.TakeRequest(f.ctx, id)
	require.NoError(t, err, "a recovered job's request can be taken")
	require.Equal(t, payload("a"), req)
	f.must(f.l.Start(f.ctx, id))
	done, err := f.l.Finish(f.ctx, id, "ran after the restart")
	require.NoError(t, err)
	require.True(t, done.CreatedAt.Equal(pending[0].CreatedAt), "CreatedAt unchanged")
	res, _, err := f.l.Result(f.ctx, id)
	require.NoError(t, err)
	require.Equal(t, "ran after the restart", res)
}

// testRestartRunning: a job RUNNING when the store closed ends FAILED at
// the restart, with an error that says so; it is not recovered.
func testRestartRunning(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	id := f.submit("a")
	f.clock.Advance(time.Second)
	f.must(f.l.Start(f.ctx, id))
	f.clock.Advance(time.Second)
	f.restart()

	snap := f.snapshot(id)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.Error(t, snap.Err)
	require.Contains(t, snap.Err.Error(), "restart", "the error names the restart")
	require.NoError(t, stress.Possible(snap))
	require.False(t, snap.CompletedAt.After(f.clock.Now()))
	require.Empty(t, f.recovered(), "an interrupted job is not run again")
	_, err := f.l.Finish(f.ctx, id, "late")
	require.ErrorIs(t, err, ledger.ErrTerminal, "a runner of the old process finds it ended")
	require.Equal(t, 0, f.depth())
}

// testRestartTerminal: terminal jobs keep their state, error, times and
// result across a restart.
func testRestartTerminal(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	var ended []ledger.Snapshot
	for _, st := range []ledger.State{ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		f.clock.Advance(time.Second)
		ended = append(ended, f.snapshot(f.toState(st)))
	}
	f.clock.Advance(time.Second)
	f.restart()
	for _, want := range ended {
		requireSame(t, want, f.snapshot(want.ID))
	}
	for range 2 {
		res, snap, err := f.l.Result(f.ctx, ended[0].ID)
		require.NoError(t, err)
		require.Equal(t, "result", res)
		requireSame(t, ended[0], snap)
	}
	st := f.l.Stats()
	require.Equal(t, [3]int{0, 3, 3}, [3]int{st.Depth, st.Jobs, st.Retained}, "depth, jobs, retained")
}

// testRestartDepth: after a restart the depth counts the jobs still live,
// the PENDING ones, since the RUNNING ones ended.
func testRestartDepth(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8})
	f.toState(ledgertype.Pending)
	f.toState(ledgertype.Pending)
	f.toState(ledgertype.Running)
	f.toState(ledgertype.Done)
	f.toState(ledgertype.Failed)
	require.Equal(t, 3, f.depth())
	f.restart()
	st := f.l.Stats()
	require.Equal(t, 2, st.Depth, "the PENDING jobs")
	require.Equal(t, 5, st.Jobs)
	require.Equal(t, 3, st.Retained, "two terminal jobs and the interrupted one")
}

// testRestartAdmission: the admission bound counts the jobs left live by
// the earlier process.
func testRestartAdmission(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 3})
	a := f.submit("a")
	f.submit("b")
	f.toState(ledgertype.Running)
	f.restart()
	f.submit("c") // the RUNNING job ended at the restart, freeing one slot
	_, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "d"}, "req")
	require.ErrorIs(t, err, ledger.ErrQueueFull, "two recovered jobs and c fill MaxQueue 3")
	f.must(f.l.Finish(f.ctx, a, "r"))
	f.submit("d")
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{TaskID: "e"}, "req")
	require.ErrorIs(t, err, ledger.ErrQueueFull)
}

// testRestartTTL: a terminal job's TTL counts from its stored completion
// time, not from the restart.
func testRestartTTL(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4, JobTTL: 10 * time.Second, MaxCompleted: -1})
	id := f.toState(ledgertype.Done)
	f.clock.Advance(6 * time.Second)
	f.restart()
	f.clock.Advance(3 * time.Second) // 9 s after the completion
	f.submit("trigger")
	require.True(t, f.held(id), "kept until its TTL")
	f.clock.Advance(time.Second) // 10 s after the completion, 4 s after the restart
	f.submit("trigger")
	require.False(t, f.held(id), "evicted at its TTL from the stored completion time")
}

// testRestartLRU: the least recently completed job is still the first
// evicted beyond MaxCompleted after a restart.
func testRestartLRU(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4, JobTTL: -1, MaxCompleted: 2})
	first := f.submit("first")
	second := f.submit("second")
	third := f.submit("third")
	f.must(f.l.Finish(f.ctx, second, "x")) // completion order: second, first, third
	f.clock.Advance(time.Second)
	f.must(f.l.Finish(f.ctx, first, "y"))
	f.clock.Advance(time.Second)
	f.must(f.l.Finish(f.ctx, third, "z"))
	f.restart()
	f.submit("trigger")
	require.False(t, f.held(second), "the least recently completed goes first")
	require.True(t, f.held(first))
	require.True(t, f.held(third))
}

// testRestartIDs: ids issued after a restart are new.
func testRestartIDs(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 100, MaxCompleted: -1, JobTTL: -1})
	seen := map[string]bool{}
	for range 20 {
		seen[f.toState(ledgertype.Done)] = true
	}
	f.restart()
	for range 20 {
		id := f.toState(ledgertype.Done)
		require.False(t, seen[id], "id %s issued again after the restart", id)
		seen[id] = true
	}
}
