package sqlite_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// stallWriter holds the database's write lock from another connection and
// gives the writer one write, a refusal (the Fail of a job that does not
// exist), to be stuck with in BEGIN: every write queued from now on joins
// that batch after it, in the order queued (or, with BatchLimit 1, waits
// for a batch of its own). release lets the writer go; the stalled write
// changes nothing, whatever its batch's fate.
func stallWriter(t *testing.T, s *sqlite.Store, e *env) (release func()) {
	t.Helper()
	unlock := e.holdWriteLock()
	done := make(chan error, 1)
	go func() { done <- errOf(s.Fail(ctx, "stall", errBoom)) }()
	sqlite.AwaitWriter(t, s, 1, 0)
	return func() {
		unlock()
		if err := <-done; !errors.Is(err, ledger.ErrNotFound) {
			require.ErrorContains(t, err, "commit")
		}
	}
}

// TestGroupCommit queues many writes while the writer is stalled: they
// commit together, one commit for all of them.
func TestGroupCommit(t *testing.T) {
	const writers = 20
	s, e := newStore(t, ledger.Config{MaxQueue: writers})
	release := stallWriter(t, s, e)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if _, _, err := s.Submit(ctx, ledger.Submission{TaskID: "g"}, nil); err != nil {
				t.Errorf("Submit: %v", err)
			}
		})
	}
	sqlite.AwaitWriter(t, s, 1, writers)
	release()
	wg.Wait()
	require.Equal(t, sqlite.WriteStats{Commits: 1, Writes: writers + 1}, s.WriteStats(),
		"the queued writes join the stalled one's batch: one commit")
	require.Equal(t, writers, s.Stats().Depth)
}

// TestBatchLimitOne: with BatchLimit 1 every write commits alone, the
// baseline of the benchmarks.
func TestBatchLimitOne(t *testing.T) {
	const writers = 8
	e := newEnv(t, ledger.Config{MaxQueue: writers})
	e.opts.BatchLimit = 1
	s := e.open()
	release := stallWriter(t, s, e)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if _, _, err := s.Submit(ctx, ledger.Submission{TaskID: "g"}, nil); err != nil {
				t.Errorf("Submit: %v", err)
			}
		})
	}
	sqlite.AwaitWriter(t, s, 1, writers)
	release()
	wg.Wait()
	require.Equal(t, sqlite.WriteStats{Commits: writers, Writes: writers}, s.WriteStats())
}

// queueInOrder starts each call in turn, once the one before it is queued
// behind a stalled writer, and returns the channel of their errors, in
// call order.
func queueInOrder(t *testing.T, s *sqlite.Store, calls ...func() error) []chan error {
	t.Helper()
	results := make([]chan error, len(calls))
	for i, c := range calls {
		results[i] = make(chan error, 1)
		go func() { results[i] <- c() }()
		sqlite.AwaitWriter(t, s, 1, i+1)
	}
	return results
}

// TestBatchAppliesInOrder: the writes of one batch see each other, in
// queue order, with the outcomes they would have had one by one: a Start
// and a Finish of one job succeed, and the Fail after them is refused.
func TestBatchAppliesInOrder(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 2})
	id := mustSubmit(t, s, "a")
	commits := s.WriteStats().Commits
	release := stallWriter(t, s, e)
	results := queueInOrder(t, s,
		func() error { return errOf(s.Start(ctx, id)) },
		func() error { return errOf(s.Finish(ctx, id, []byte("r"))) },
		func() error { return errOf(s.Fail(ctx, id, errBoom)) },
	)
	release()
	require.NoError(t, <-results[0])
	require.NoError(t, <-results[1])
	require.ErrorIs(t, <-results[2], ledger.ErrTerminal)
	require.Equal(t, commits+1, s.WriteStats().Commits, "one batch, one commit")
	_, snap, err := s.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Done, snap.State)
	require.Equal(t, snap.StartedAt, snap.CompletedAt, "one batch, one reading of the clock")
}

// failNextCommit makes the store's next commit that ends a job DONE fail:
// a trigger, added behind the store's back, inserts a row that breaks a
// deferred foreign key, which SQLite checks at COMMIT. It returns the
// function that removes the trap.
func failNextCommit(e *env) (disarm func()) {
	e.exec(
		`CREATE TABLE trap_parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE trap_child (pid INTEGER REFERENCES trap_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE TRIGGER trap AFTER UPDATE OF state ON jobs WHEN NEW.state = 2
			BEGIN INSERT INTO trap_child VALUES (42); END`,
	)
	return func() { e.exec(`DROP TRIGGER trap`) }
}

// TestFailedCommitChangesNothing: when COMMIT fails, every write of the
// batch gets the error, nothing of the batch is seen, by a reader or a
// waiter, and the writer's counters are the database's again, so that
// the next batch commits as if the failed one had never been.
func TestFailedCommitChangesNothing(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 3})
	id := toState(t, s, ledgertype.Running)
	other := mustSubmit(t, s, "other")
	before := s.Stats()
	commits := s.WriteStats().Commits

	waiterCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := waitAsync(waiterCtx, s, id)
	sqlite.AwaitWaiter(t, s, id)

	disarm := failNextCommit(e)
	release := stallWriter(t, s, e) // so that the three writes share a batch
	results := queueInOrder(t, s,
		func() error { return errOf(s.Finish(ctx, id, []byte("lost"))) },
		func() error { return errOf(s.Fail(ctx, other, errBoom)) },
		func() error {
			_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "third"}, nil)
			return err
		},
	)
	release()
	for _, r := range results {
		require.ErrorContains(t, <-r, "commit")
	}
	require.Equal(t, commits, s.WriteStats().Commits)

	require.Equal(t, ledgertype.Running, state(t, s, id), "the failed batch is not seen")
	require.Equal(t, ledgertype.Pending, state(t, s, other))
	require.Equal(t, before, s.Stats(), "the counters are the database's")
	checkInvariants(t, s)

	// The waiter was not woken: the job did not end. (A wakeup before the
	// commit would have handed it the DONE that never committed.)
	cancel()
	r := <-got
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, ledgertype.Running, r.snap.State)

	disarm()
	snap, err := s.Finish(ctx, id, []byte("kept"))
	require.NoError(t, err)
	require.Equal(t, ledgertype.Done, snap.State)
	res, _, err := s.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "kept", string(res))
	mustSubmit(t, s, "fourth")
	require.Equal(t, 2, s.Stats().Depth)
}

// TestLRUEvictionInOneBatch: the evictions of the Submits of one batch are
// deleted together before its commit, and are those the Submits would
// have made one by one, jobs ended earlier in the batch included. A write
// later in the batch that names an evicted job may find it still there,
// terminal: it is refused either way.
func TestLRUEvictionInOneBatch(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 1})
	a := toState(t, s, ledgertype.Done)
	b := toState(t, s, ledgertype.Done)
	x := toState(t, s, ledgertype.Running)
	y := toState(t, s, ledgertype.Running)
	mustSubmit(t, s, "trigger") // evicts a: b is left
	release := stallWriter(t, s, e)
	submit := func() error { _, _, err := s.Submit(ctx, ledger.Submission{TaskID: "s"}, nil); return err }
	results := queueInOrder(t, s,
		func() error { return errOf(s.Finish(ctx, x, nil)) }, // b, x retained
		submit, // evicts b
		func() error { return errOf(s.Fail(ctx, b, errBoom)) },
		func() error { return errOf(s.Finish(ctx, y, nil)) }, // x, y retained
		submit, // evicts x
	)
	release()
	for i, want := range []error{nil, nil, ledger.ErrTerminal, nil, nil} {
		err := <-results[i]
		if i == 2 && errors.Is(err, ledger.ErrNotFound) {
			continue // evicted by the Submit before it: either answer is a refusal
		}
		require.ErrorIs(t, err, want, "write %d", i)
	}
	for id, want := range map[string]bool{a: false, b: false, x: false, y: true} {
		require.Equal(t, want, held(s, id), id)
	}
	require.Equal(t, ledger.Stats{Depth: 3, Jobs: 4, Retained: 1, EvictedLRU: 3}, s.Stats())
}
