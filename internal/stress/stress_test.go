package stress_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/linearizability"
)

// shortStress is the seed's shape, shortened for the test suite: the run
// ends after 300 ms or 40,000 operations, whichever comes first.
func shortStress() stress.Config {
	cfg := stress.DefaultConfig()
	cfg.Duration = 300 * time.Millisecond
	cfg.MaxOps = 40_000
	cfg.MaxQueue = 2
	cfg.Progress = nil
	return cfg
}

func TestStressLinearizable(t *testing.T) {
	cfg := shortStress()
	res, err := stress.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Empty(t, res.Violations)
	require.Positive(t, res.Accepted)
	require.Positive(t, res.Rejected, "admission was not contested")

	rep := linearizability.Check(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, VisualizeDir: t.TempDir()})
	require.Equal(t, linearizability.Linearizable, rep.Verdict, "%s; visualization: %s", rep.Message, rep.Visualization)
	// Keyed submits were recorded and checked by the key model: some
	// created jobs, some replayed them, some were refused for another
	// request.
	require.Positive(t, rep.KeyedJobs, "no keyed submit created a job")
	require.Positive(t, rep.KeyOps)
	require.Positive(t, res.Replays, "no keyed submit replayed")
	require.Positive(t, res.Conflicts, "no keyed submit was refused for another request")
	t.Logf("%d ops, %d accepted, %d rejected, evicted %d+%d; %d job partitions in %v, admission %d ops in %d segments in %v; keyed: %d jobs under %d keys, %d replays, %d conflicts",
		len(res.History), res.Accepted, res.Rejected, res.Stats.EvictedTTL, res.Stats.EvictedLRU,
		rep.JobPartitions, rep.JobCheck, rep.AdmissionOps, rep.AdmissionSegments, rep.AdmissionCheck,
		rep.KeyedJobs, rep.KeyPartitions, res.Replays, res.Conflicts)
}

func TestStressRejectsBadConfig(t *testing.T) {
	cfg := shortStress()
	cfg.Runners = 0
	_, err := stress.Run(context.Background(), cfg)
	require.Error(t, err)
}

// The faults below stand in for broken ledgers, to show that each check
// notices what it is there to notice.

// startAnyway reports Start as successful whatever the table said (a Start
// after the end is accepted).
type startAnyway struct{ stress.Ledger }

func (l startAnyway) Start(ctx context.Context, id string) error {
	l.Ledger.Start(ctx, id)
	return nil
}

// spuriousFull rejects a submit the table never saw, below the bound.
type spuriousFull struct{ stress.Ledger }

func (l spuriousFull) Submit(context.Context, string, string) (string, error) {
	return "", jobtable.ErrQueueFull
}

// deafWaiter never hears the job end: it blocks until its context ends and
// reports the state it saw when it started, as a lost wakeup would.
type deafWaiter struct{ stress.Ledger }

func (l deafWaiter) Wait(ctx context.Context, id string) (jobtable.Snapshot, error) {
	snap, err := l.Ledger.Snapshot(ctx, id)
	if err != nil || snap.State.Terminal() {
		return snap, err
	}
	<-ctx.Done()
	return snap, ctx.Err()
}

// keyForgotten never finds a key held: each keyed submit creates a job.
type keyForgotten struct{ stress.Ledger }

func (l keyForgotten) SubmitKeyed(ctx context.Context, _, _, taskID, req string) (string, bool, error) {
	id, err := l.Ledger.Submit(ctx, taskID, req)
	return id, false, err
}

// panicsOnEnd panics in one Finish in ten, after the table ended the job,
// as a ledger whose end closes a wakeup channel twice does.
type panicsOnEnd struct {
	stress.Ledger
	n *atomic.Int64
}

func (l panicsOnEnd) Finish(ctx context.Context, id, res string) error {
	err := l.Ledger.Finish(ctx, id, res)
	if l.n.Add(1)%10 == 0 {
		panic("close of closed channel")
	}
	return err
}

// TestStressReportsPanics: a ledger call that panics is a violation of the
// run, which goes on and ends: the driver neither crashes nor hangs.
func TestStressReportsPanics(t *testing.T) {
	cfg := shortStress()
	cfg.MaxOps = 10_000
	var n atomic.Int64
	cfg.Wrap = func(l stress.Ledger) stress.Ledger { return panicsOnEnd{l, &n} }
	res, err := stress.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n.Load(), int64(10), "no Finish panicked")
	require.Contains(t, strings.Join(res.Violations, "\n"), "ledger call(s) panicked, the first in Finish: close of closed channel")
}

func TestStressCatchesFaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wrap       func(stress.Ledger) stress.Ledger
		model      string // the model that must reject the history; "" when none must
		invariants bool   // whether a stress invariant must fail
	}{
		{"start after end", func(l stress.Ledger) stress.Ledger { return startAnyway{l} }, "job", false},
		{"rejected below the bound", func(l stress.Ledger) stress.Ledger { return spuriousFull{l} }, "admission", false},
		{"key forgotten", func(l stress.Ledger) stress.Ledger { return keyForgotten{l} }, "key", false},
		// A waiter stuck in an unbounded Wait is caught by the stress
		// invariants every time; a bounded Wait that reports stale state
		// is caught by the job model when the run has one.
		{"lost wakeup", func(l stress.Ledger) stress.Ledger { return deafWaiter{l} }, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := shortStress()
			cfg.MaxOps = 10_000
			cfg.Grace = 50 * time.Millisecond // the fault never returns by itself
			cfg.Wrap = tc.wrap
			res, err := stress.Run(context.Background(), cfg)
			require.NoError(t, err)
			if tc.invariants {
				require.NotEmpty(t, res.Violations)
				t.Log(res.Violations)
			}
			rep := linearizability.Check(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, NoVisualize: true})
			if tc.model == "" {
				t.Logf("%v: %s", rep.Verdict, rep.Message)
				return
			}
			require.Equal(t, linearizability.Violation, rep.Verdict)
			require.Equal(t, tc.model, rep.Model, rep.Message)
			t.Log(rep.Message)
		})
	}
}

// TestRecorderKeepsPending: an operation that has not returned, or whose
// outcome is unknown, is recorded pending forever, never dropped.
func TestRecorderKeepsPending(t *testing.T) {
	rec := stress.NewRecorder()
	l := &blocking{release: make(chan struct{}), called: make(chan struct{})}
	c := rec.Client(l)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Finish(context.Background(), "j1", "x1")
	}()
	<-l.called
	_, err := rec.Client(l).Submit(context.Background(), "t1", "r1")
	require.Error(t, err)

	h := rec.History()
	require.Len(t, h, 2)
	for _, op := range h {
		require.Equal(t, int64(linearizability.Pending), op.Return)
		require.Equal(t, linearizability.Unknown, op.Output.(linearizability.Output).Outcome)
	}
	close(l.release)
	<-done
	h = rec.History()
	var finished int
	for _, op := range h {
		if op.Input.(linearizability.Input).Kind == linearizability.Finish {
			require.Less(t, op.Return, int64(linearizability.Pending))
			finished++
		}
	}
	require.Equal(t, 1, finished)
}

// blocking is a Ledger whose Finish blocks until release and whose Submit
// fails with an error that says nothing about the ledger.
type blocking struct {
	stress.Ledger
	release, called chan struct{}
}

func (b *blocking) Finish(ctx context.Context, id, res string) error {
	close(b.called)
	<-b.release
	return nil
}

func (b *blocking) Submit(ctx context.Context, taskID, req string) (string, error) {
	return "", errors.New("connection reset")
}

// TestWaitDeadlineRecordedAsRead: a Wait that returns a non-terminal state
// on its own deadline is recorded as a read between the deadline and its
// return.
func TestWaitDeadlineRecordedAsRead(t *testing.T) {
	tab, err := jobtable.New[string, string](jobtable.Config{MaxQueue: 1})
	require.NoError(t, err)
	rec := stress.NewRecorder()
	c := rec.Client(stress.TableLedger{T: tab})
	id, err := c.Submit(context.Background(), "t1", "r1")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_, err = c.Wait(ctx, id)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	h := rec.History()
	require.Len(t, h, 2)
	w := h[1]
	require.Equal(t, linearizability.Wait, w.Input.(linearizability.Input).Kind)
	// The read is no earlier than the deadline (or the call, if the
	// deadline had passed before it).
	require.GreaterOrEqual(t, w.Call, rec.Clock().At(deadline))
	require.LessOrEqual(t, w.Call, w.Return)
}

func TestClockStrictlyIncreasing(t *testing.T) {
	c := stress.NewClock()
	const workers, n = 4, 1000
	stamps := make(chan []int64, workers)
	for range workers {
		go func() {
			s := make([]int64, n)
			for i := range s {
				s[i] = c.Now()
			}
			stamps <- s
		}()
	}
	seen := make(map[int64]bool)
	for range workers {
		s := <-stamps
		for i, v := range s {
			if i > 0 {
				require.Greater(t, v, s[i-1])
			}
			require.False(t, seen[v], "stamp %d handed out twice", v)
			seen[v] = true
		}
	}
}

// liveWait returns at once, with the job as it is: a Wait that returns a
// live job.
type liveWait struct{ stress.Ledger }

func (l liveWait) Wait(ctx context.Context, id string) (ledgertype.Snapshot, error) {
	return l.Ledger.Snapshot(ctx, id)
}

// endAnyway reports every Timeout as successful: a second terminal call
// accepted.
type endAnyway struct{ stress.Ledger }

func (l endAnyway) Timeout(ctx context.Context, id, msg string) error {
	l.Ledger.Timeout(ctx, id, msg)
	return nil
}

// TestDriveCatchesFaults: the checks the workers make as they go, in the
// unrecorded shape of the table's stress and the conformance suite's,
// notice what they are there to notice.
func TestDriveCatchesFaults(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		wrap       func(stress.Ledger) stress.Ledger
	}{
		{"live wait", "returned a live job", func(l stress.Ledger) stress.Ledger { return liveWait{l} }},
		{"second end accepted", "second terminal call", func(l stress.Ledger) stress.Ledger { return endAnyway{l} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stress.LedgerConfig()
			cfg.Duration, cfg.Grace, cfg.Wrap = 100*time.Millisecond, 50*time.Millisecond, tc.wrap
			tab, err := jobtable.New[string, string](jobtable.Config{MaxQueue: cfg.MaxQueue, JobTTL: cfg.JobTTL, MaxCompleted: cfg.MaxCompleted})
			require.NoError(t, err)
			res, err := stress.Drive(context.Background(), cfg, stress.TableLedger{T: tab})
			require.NoError(t, err)
			require.Contains(t, strings.Join(res.Violations, "\n"), tc.want)
			require.Zero(t, res.History, "unrecorded")
		})
	}
}
