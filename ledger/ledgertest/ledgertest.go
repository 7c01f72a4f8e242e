package ledgertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Store is the store under test. End a literal with field names: the
// trailing blank field forbids positional ones.
type Store struct {
	// Open returns a fresh, empty store configured by cfg. It must
	// honour every field of cfg (see the package doc) and fail t when it
	// cannot open. The suite closes the store when the test ends; Open may
	// register cleanups of its own (a temporary directory) with t.
	Open func(t *testing.T, cfg ledger.Config) ledger.Ledger[string, string]

	// Restart closes l, a store returned by Open or by Restart, and opens
	// the same store again with the Config it was first opened with (the
	// suite's clock included), as a new process would after a crash; such
	// a store must be a ledger.Recoverer. If left nil, the store is taken
	// not to survive a restart, and the restart rules are skipped.
	Restart func(t *testing.T, l ledger.Ledger[string, string]) ledger.Ledger[string, string]

	_ struct{} // forbid positional literals
}

// Run runs every rule of the contract against s, each as a subtest of t
// named for the rule, on stores of its own. The races and the stress run
// first, one at a time, since what they catch depends on their goroutines
// meeting; the other rules then run in parallel, so s.Open and s.Restart
// must be safe for concurrent use.
func Run(t *testing.T, s Store) {
	t.Helper()
	if s.Open == nil {
		t.Fatal("ledgertest: Store.Open is nil")
	}
	for _, r := range rules {
		alone := strings.HasPrefix(r.name, "Race/") || r.name == "Stress"
		t.Run(r.name, func(t *testing.T) {
			if !alone {
				t.Parallel()
			}
			r.run(t, s)
		})
	}
}

// rules are the suite's subtests, in the order they run: the cheap,
// sequential rules first, the races and the stress after them.
var rules = []struct {
	name string
	run  func(*testing.T, Store)
}{
	{"StateMachine", testStateMachine},
	{"TerminalAbsorbing", testTerminalAbsorbing},
	{"TransitionsReturnTheirSnapshot", testTransitionsReturnTheirSnapshot},
	{"StateIsTheSnapshotsState", testStateIsTheSnapshotsState},
	{"UnknownID", testUnknownID},
	{"UniqueIDs", testUniqueIDs},
	{"ResultOnlyWhenDone", testResultOnlyWhenDone},
	{"TakeRequestOnce", testTakeRequestOnce},
	{"TakeRequestAfterEnd", testTakeRequestAfterEnd},
	{"TimestampsAndErrors", testTimestampsAndErrors},
	{"NilCause", testNilCause},
	{"Closed", testClosed},
	{"RecoveredEmptyWhenFresh", testRecoveredEmptyWhenFresh},
	{"Admission/ZeroOrNegativeAdmitsNothing", testAdmissionZero},
	{"Admission/BoundSerial", testAdmissionSerial},
	{"Admission/FreedOnceByTheEnd", testAdmissionFreedOnce},
	{"Retention/TTL", testTTLEviction},
	{"Retention/LRU", testLRUEviction},
	{"Retention/LRUOrderIsCompletionOrder", testLRUOrder},
	{"Retention/TTLBeforeLRU", testTTLBeforeLRU},
	{"Retention/DefaultTTL", testDefaultTTL},
	{"Retention/NegativeBoundsRetainForever", testNegativeBounds},
	{"Retention/LiveJobNeverEvicted", testLiveNeverEvicted},
	{"Keys/Replay", testKeyReplay},
	{"Keys/Conflict", testKeyConflict},
	{"Keys/NoKeyNoCheck", testNoKeyNoCheck},
	{"Keys/EvictedWithItsJob", testKeyEvictedWithItsJob},
	{"Keys/EvictedByTheBound", testKeyLRUEviction},
	{"Keys/SurviveRestart", testKeySurvivesRestart},
	{"List/NewestFirst", testListNewestFirst},
	{"List/Filters", testListFilters},
	{"List/LimitCapped", testListLimit},
	{"List/BadQuery", testListBadQuery},
	{"List/CursorStable", testListCursorStable},
	{"List/StateDuringWalk", testListStateDuringWalk},
	{"List/SurvivesRestart", testListSurvivesRestart},
	{"Wait/TerminalJobAtOnce", testWaitTerminal},
	{"Wait/WakesOnEveryEnd", testWaitWakes},
	{"Wait/ContextEnd", testWaitContextEnd},
	{"Wait/ManyWaiters", testManyWaiters},
	{"Wait/SurvivesEviction", testWaitSurvivesEviction},
	{"Wait/NeverMissesCompletion", testWaitNeverMisses},
	{"Race/AdmissionBound", testAdmissionConcurrent},
	{"Race/OneTerminalCallWins", testTerminalRace},
	{"Race/TakeRequestOneWins", testTakeRequestRace},
	{"Race/TimestampsOrdered", testTimestampsOrdered},
	{"Race/SnapshotsWhole", testSnapshotsWhole},
	{"Race/OneJobPerKey", testKeyRace},
	{"Race/ListWalks", testListRace},
	{"Stress", testStress},
	{"Restart", testRestart},
}

// callBound bounds the calls of one test of the suite: far beyond what any
// of them takes on a working store, even on a loaded machine.
const callBound = time.Minute

// errBoom is the cause the suite fails and times jobs out with.
var errBoom = errors.New("boom")

// fixture is one store under test, with the fake clock it was opened on.
type fixture struct {
	t     *testing.T
	store Store
	clock *fakeclock.Clock
	l     ledger.Ledger[string, string] // the store as last opened
	ctx   context.Context
	// closed is set once the test closed l itself; the cleanup then
	// leaves it.
	closed bool
}

// open opens a fresh store on a fake clock (unless cfg brings its own).
// When the test ends, the store as last opened must satisfy its own
// invariants, and is closed.
func open(t *testing.T, s Store, cfg ledger.Config) *fixture {
	t.Helper()
	clock := fakeclock.New()
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	// Every call the suite makes through f.ctx is bounded: a store that
	// deadlocks fails its test with the context's error, never hangs the
	// run.
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	t.Cleanup(cancel)
	f := &fixture{t: t, store: s, clock: clock, ctx: ctx}
	f.l = s.Open(t, cfg)
	require.NotNil(t, f.l, "Store.Open returned nil")
	t.Cleanup(func() {
		if f.closed {
			return
		}
		if err := f.checkInvariants(); err != nil {
			t.Errorf("the store's invariants when the test ended:\n%v", err)
		}
		if err := f.l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f
}

// restart closes the store and opens it again through Store.Restart.
func (f *fixture) restart() {
	f.t.Helper()
	require.NoError(f.t, f.checkInvariants(), "before the restart")
	f.l = f.store.Restart(f.t, f.l)
	require.NotNil(f.t, f.l, "Store.Restart returned nil")
	require.NoError(f.t, f.checkInvariants(), "after the restart")
}

// checkInvariants is the store's own check of its invariants, nil for a
// store that is no ledger.Checker.
func (f *fixture) checkInvariants() error {
	if c, ok := ledger.As[ledger.Checker](f.l); ok {
		return c.CheckInvariants()
	}
	return nil
}

// recovered is the store's Recovered, failing the test on an error or for
// a store that is no ledger.Recoverer.
func (f *fixture) recovered() []ledger.Snapshot {
	f.t.Helper()
	r, ok := ledger.As[ledger.Recoverer](f.l)
	require.True(f.t, ok, "a store that survives a restart is a ledger.Recoverer")
	rec, err := r.Recovered(f.ctx)
	require.NoError(f.t, err, "Recovered")
	return rec
}

// submit admits a job carrying "payload of TASKID".
func (f *fixture) submit(taskID string) string {
	f.t.Helper()
	id, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: taskID}, payload(taskID))
	require.NoError(f.t, err)
	require.NotEmpty(f.t, id)
	return id
}

func payload(taskID string) string { return "payload of " + taskID }

// toState submits a job and drives it into state s: DONE with result
// "result", FAILED and TIMEOUT with errBoom.
func (f *fixture) toState(s ledger.State) string {
	f.t.Helper()
	id := f.submit("task")
	switch s {
	case ledgertype.Pending:
	case ledgertype.Running:
		f.must(f.l.Start(f.ctx, id))
	case ledgertype.Done:
		f.must(f.l.Start(f.ctx, id))
		f.must(f.l.Finish(f.ctx, id, "result"))
	case ledgertype.Failed:
		f.must(f.l.Fail(f.ctx, id, errBoom))
	case ledgertype.TimedOut:
		f.must(f.l.Timeout(f.ctx, id, errBoom))
	default:
		f.t.Fatalf("no such state %v", s)
	}
	return id
}

// must fails the test on a transition's error.
func (f *fixture) must(_ ledger.Snapshot, err error) {
	f.t.Helper()
	require.NoError(f.t, err)
}

func (f *fixture) snapshot(id string) ledger.Snapshot {
	f.t.Helper()
	snap, err := f.l.Snapshot(f.ctx, id)
	require.NoError(f.t, err, "Snapshot(%s)", id)
	return snap
}

// held reports whether the store still holds job id.
func (f *fixture) held(id string) bool {
	f.t.Helper()
	_, err := f.l.Snapshot(f.ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return false
	}
	require.NoError(f.t, err, "Snapshot(%s)", id)
	return true
}

func (f *fixture) depth() int { return f.l.Stats().Depth }

// repeat runs round(i) for i = 0, 1, ... until at least minRounds rounds
// and minTime have passed, or maxRounds rounds, or round returns false.
// It returns the number of rounds run. A race shows in some rounds only,
// so a fast store runs many; a slow one (a durable store's commits) stops
// after minRounds rather than running for minutes.
func repeat(minRounds, maxRounds int, minTime time.Duration, round func(i int) bool) int {
	start := time.Now()
	i := 0
	for ; i < maxRounds && (i < minRounds || time.Since(start) < minTime); i++ {
		if !round(i) {
			return i + 1
		}
	}
	return i
}

// notReturned fails t if got delivers within a short pause. A rule that
// wants a waiter blocked before it ends the job has no way to see it
// block through the contract, so it pauses, and asserts meanwhile that
// Wait did not return on a live job: the pause can only make the rule
// weaker, never wrong.
func notReturned[T any](t *testing.T, got <-chan T, what string) {
	t.Helper()
	select {
	case v := <-got:
		t.Fatalf("%s returned before the job ended: %+v", what, v)
	case <-time.After(20 * time.Millisecond):
	}
}

// lostWakeupGrace bounds how long a waiter may take to return once its
// job is terminal. A correct store never comes near it; it only ends a
// run whose waiter missed its wakeup.
const lostWakeupGrace = 10 * time.Second
