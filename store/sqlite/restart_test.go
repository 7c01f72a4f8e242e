package sqlite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestReopenKeepsJobs: everything acknowledged before Close is there after
// Open, field for field: the terminal jobs with their results and errors,
// the PENDING one with its request and times.
func TestReopenKeepsJobs(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 8})
	s := e.open()
	pending := toState(t, s, ledgertype.Pending)
	done := toState(t, s, ledgertype.Done)
	failed := toState(t, s, ledgertype.Failed)
	timedOut := toState(t, s, ledgertype.TimedOut)
	var before []ledger.Snapshot
	for _, id := range []string{pending, done, failed, timedOut} {
		snap, err := s.Snapshot(ctx, id)
		require.NoError(t, err)
		before = append(before, snap)
	}
	stats := s.Stats()

	e.clock.Advance(time.Minute)
	s = e.reopen(s)
	for _, want := range before {
		got, err := s.Snapshot(ctx, want.ID)
		require.NoError(t, err)
		require.Equal(t, want.State, got.State)
		require.Equal(t, want.CreatedAt, got.CreatedAt)
		require.Equal(t, want.StartedAt, got.StartedAt)
		require.Equal(t, want.CompletedAt, got.CompletedAt)
		if want.Err != nil {
			require.EqualError(t, got.Err, want.Err.Error())
		}
	}
	res, _, err := s.Result(ctx, done)
	require.NoError(t, err)
	require.Equal(t, "result", string(res))
	req, err := s.TakeRequest(ctx, pending)
	require.NoError(t, err)
	require.Equal(t, "payload of task", string(req))
	require.Equal(t, ledger.Stats{Depth: stats.Depth, Jobs: stats.Jobs, Retained: stats.Retained}, s.Stats())
	rec, err := s.Recovered(ctx)
	require.NoError(t, err)
	require.Equal(t, []ledger.Snapshot{before[0]}, rec)
}

// TestRestartFailsRunningJobs: a job RUNNING when its process stopped ends
// FAILED at the next Open, "interrupted by restart", completed at the
// restart's time, and gives its slot back; its waiters see the end.
func TestRestartFailsRunningJobs(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 2})
	s := e.open()
	running := toState(t, s, ledgertype.Running)
	pending := toState(t, s, ledgertype.Pending)
	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "full"}, nil)
	require.ErrorIs(t, err, ledger.ErrQueueFull)

	e.clock.Advance(time.Hour)
	restart := e.clock.Now()
	s = e.reopen(s)
	snap, err := s.Snapshot(ctx, running)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, snap.State)
	require.EqualError(t, snap.Err, sqlite.InterruptedByRestart)
	require.Equal(t, restart, snap.CompletedAt)
	require.Equal(t, ledgertype.Pending, state(t, s, pending), "a PENDING job stays PENDING")
	require.Equal(t, 1, s.Stats().Depth, "the failed job gave its slot back")

	_, err = s.TakeRequest(ctx, running)
	require.ErrorIs(t, err, ledger.ErrTerminal)
	_, err = s.Finish(ctx, running, nil)
	require.ErrorIs(t, err, ledger.ErrTerminal, "a runner of the old process cannot finish it")
	w, err := s.Wait(ctx, running)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Failed, w.State)
	mustSubmit(t, s, "fits again")
}

// TestRecoveredPendingJobsRunAgain: Recovered lists the PENDING jobs,
// oldest first, with their CreatedAt; take-once starts afresh for them, so
// a job whose request was taken but that never started runs again.
func TestRecoveredPendingJobsRunAgain(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 4})
	s := e.open()
	first := mustSubmit(t, s, "first")
	e.clock.Advance(time.Second)
	second := mustSubmit(t, s, "second")
	e.clock.Advance(time.Second)
	taken := mustSubmit(t, s, "taken")
	_, err := s.TakeRequest(ctx, taken)
	require.NoError(t, err)
	toState(t, s, ledgertype.Done)
	rec, err := s.Recovered(ctx)
	require.NoError(t, err)
	require.Empty(t, rec, "a new file has nothing to recover")

	s = e.reopen(s)
	rec, err = s.Recovered(ctx)
	require.NoError(t, err)
	var ids []string
	for _, snap := range rec {
		require.Equal(t, ledgertype.Pending, snap.State)
		ids = append(ids, snap.ID)
	}
	require.Equal(t, []string{first, second, taken}, ids, "oldest first")
	require.Equal(t, e.clock.Now().Add(-2*time.Second), rec[0].CreatedAt)
	req, err := s.TakeRequest(ctx, taken)
	require.NoError(t, err, "the taken request is handed out again after the restart")
	require.Equal(t, "payload of taken", string(req))
	_, err = s.TakeRequest(ctx, taken)
	require.ErrorIs(t, err, ledger.ErrRequestTaken)
}

// TestReopenRestoresDepth: the admission bound holds across a restart: the
// depth comes back from the file, so a full queue stays full.
func TestReopenRestoresDepth(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 3})
	s := e.open()
	mustSubmit(t, s, "a")
	mustSubmit(t, s, "b")
	done := mustSubmit(t, s, "c")
	require.NoError(t, errOf(s.Finish(ctx, done, nil)))
	mustSubmit(t, s, "d")

	s = e.reopen(s)
	require.Equal(t, 3, s.Stats().Depth)
	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "e"}, nil)
	require.ErrorIs(t, err, ledger.ErrQueueFull, "the queue was full before the restart")

	s = e.reopen(s)
	require.Equal(t, 3, s.Stats().Depth)
}

// TestReopenWithSmallerQueue: a depth above a lowered MaxQueue is kept (the
// jobs were admitted), and Submit admits again once it is below.
func TestReopenWithSmallerQueue(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 3})
	s := e.open()
	a := mustSubmit(t, s, "a")
	b := mustSubmit(t, s, "b")
	mustSubmit(t, s, "c")
	e.cfg.MaxQueue = 1
	s = e.reopen(s)
	require.Equal(t, 3, s.Stats().Depth)
	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "d"}, nil)
	require.ErrorIs(t, err, ledger.ErrQueueFull)
	require.NoError(t, errOf(s.Fail(ctx, a, errBoom)))
	require.NoError(t, errOf(s.Fail(ctx, b, errBoom)))
	_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "d"}, nil)
	require.ErrorIs(t, err, ledger.ErrQueueFull, "depth 1 is MaxQueue")
}

// TestReopenEvicts: the retention pass at Open brings a file written under
// another Config within this one's bounds.
func TestReopenEvicts(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: -1})
	s := e.open()
	var ids []string
	for range 5 {
		ids = append(ids, toState(t, s, ledgertype.Done))
	}
	e.cfg.MaxCompleted = 2
	s = e.reopen(s)
	for i, id := range ids {
		require.Equal(t, i >= 3, held(s, id), "job %d", i)
	}
	require.Equal(t, ledger.Stats{Jobs: 2, Retained: 2, EvictedLRU: 3}, s.Stats())
}

// TestClockBackwardsAcrossRestart: a wall clock stepped back across a
// restart does not break the timestamp order or the retention order: the
// store's time never goes below what it stored.
func TestClockBackwardsAcrossRestart(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 4, JobTTL: -1})
	s := e.open()
	e.clock.Advance(time.Hour)
	pending := mustSubmit(t, s, "p")
	running := toState(t, s, ledgertype.Running)
	done := toState(t, s, ledgertype.Done)
	latest := e.clock.Now()

	s.Close()
	e.clock = fakeclock.New() // an hour earlier
	e.cfg.Now = e.clock.Now
	s = e.open()
	snap, err := s.Snapshot(ctx, running)
	require.NoError(t, err)
	require.Equal(t, latest, snap.CompletedAt, "failed at the latest stored time")
	snap, err = s.Start(ctx, pending)
	require.NoError(t, err)
	require.False(t, snap.StartedAt.Before(snap.CreatedAt))
	snap, err = s.Finish(ctx, pending, nil)
	require.NoError(t, err)
	d, err := s.Snapshot(ctx, done)
	require.NoError(t, err)
	require.False(t, snap.CompletedAt.Before(d.CompletedAt))
	checkInvariants(t, s) // TimestampOrderInv, RetentionListInv
}
