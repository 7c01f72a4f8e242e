package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

func held(s *sqlite.Store, id string) bool {
	_, err := s.Snapshot(ctx, id)
	return err == nil
}

func TestTTLEviction(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: 10 * second, MaxCompleted: -1})
	old := toState(t, s, ledgertype.Done)
	e.clock.Advance(5 * second)
	young := toState(t, s, ledgertype.Failed)
	e.clock.Advance(5 * second) // old is exactly JobTTL past completion

	require.True(t, held(s, old), "eviction happens only on Submit")
	mustSubmit(t, s, "trigger")
	require.False(t, held(s, old), "old expired at its TTL")
	require.True(t, held(s, young))

	e.clock.Advance(5 * second)
	mustSubmit(t, s, "trigger")
	require.False(t, held(s, young))
	require.Equal(t, ledger.Stats{Depth: 2, Jobs: 2, Retained: 0, EvictedTTL: 2}, s.Stats())
}

func TestLRUEviction(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 2})
	a := toState(t, s, ledgertype.Done)
	b := toState(t, s, ledgertype.TimedOut)
	c := toState(t, s, ledgertype.Failed)
	require.True(t, held(s, a), "eviction happens only on Submit")

	mustSubmit(t, s, "trigger")
	require.False(t, held(s, a), "the least recently completed goes first")
	require.True(t, held(s, b))
	require.True(t, held(s, c))
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedLRU: 1}, s.Stats())
}

func TestLRUOrderIsCompletionOrder(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 1})
	first := mustSubmit(t, s, "first")
	second := mustSubmit(t, s, "second")
	require.NoError(t, errOf(s.Finish(ctx, second, nil))) // submitted later, completed first
	require.NoError(t, errOf(s.Finish(ctx, first, nil)))

	mustSubmit(t, s, "trigger")
	require.False(t, held(s, second))
	require.True(t, held(s, first))
}

func TestTTLBeforeLRU(t *testing.T) {
	s, env := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: 10 * second, MaxCompleted: 2})
	a := toState(t, s, ledgertype.Done)
	b := toState(t, s, ledgertype.Done)
	env.clock.Advance(10 * second) // a and b expire
	c := toState(t, s, ledgertype.Done)
	d := toState(t, s, ledgertype.Done)
	e := toState(t, s, ledgertype.Done)

	mustSubmit(t, s, "trigger")
	// TTL removes a and b; then LRU trims c, the oldest of the three left.
	for id, want := range map[string]bool{a: false, b: false, c: false, d: true, e: true} {
		require.Equal(t, want, held(s, id), id)
	}
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedTTL: 2, EvictedLRU: 1}, s.Stats())
}

func TestNonTerminalNeverEvicted(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 8, JobTTL: second, MaxCompleted: 1})
	pending := toState(t, s, ledgertype.Pending)
	running := toState(t, s, ledgertype.Running)
	for range 5 {
		e.clock.Advance(time24h)
		id := mustSubmit(t, s, "churn")
		require.NoError(t, errOf(s.Finish(ctx, id, nil)))
	}
	require.Equal(t, ledgertype.Pending, state(t, s, pending))
	require.Equal(t, ledgertype.Running, state(t, s, running))
	require.Equal(t, 2, s.Stats().Depth)
}

const time24h = 24 * 60 * 60 * second

func TestDefaultsRetain(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 1})
	id := toState(t, s, ledgertype.Done)
	e.clock.Advance(jobtable.DefaultJobTTL - 1)
	mustSubmit(t, s, "trigger")
	require.True(t, held(s, id), "kept for DefaultJobTTL")
}

func TestNegativeBoundsRetainForever(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 1, JobTTL: -1, MaxCompleted: -1})
	var ids []string
	for range 50 {
		id := mustSubmit(t, s, "x")
		require.NoError(t, errOf(s.Finish(ctx, id, nil)))
		ids = append(ids, id)
		e.clock.Advance(time24h)
	}
	mustSubmit(t, s, "trigger")
	for _, id := range ids {
		require.True(t, held(s, id))
	}
}

// TestWaitOutlivesEviction: a waiter woken by the end of its job gets the
// final snapshot even if a Submit evicts the job right after.
func TestWaitOutlivesEviction(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 2, JobTTL: -1, MaxCompleted: 1})
	id := toState(t, s, ledgertype.Running)
	got := waitAsync(ctx, s, id)
	sqlite.AwaitWaiter(t, s, id)
	require.NoError(t, errOf(s.Finish(ctx, id, nil)))
	toState(t, s, ledgertype.Done)
	mustSubmit(t, s, "trigger") // evicts id
	require.False(t, held(s, id))
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, ledgertype.Done, r.snap.State)
	require.Equal(t, id, r.snap.ID)
}
