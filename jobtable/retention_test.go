package jobtable_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

func held(tab *table, id string) bool {
	_, err := tab.Snapshot(id)
	return err == nil
}

func TestTTLEviction(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 8, JobTTL: 10 * second, MaxCompleted: -1})
	old := toState(t, tab, ledgertype.Done)
	clock.Advance(5 * second)
	young := toState(t, tab, ledgertype.Failed)
	clock.Advance(5 * second) // old is exactly JobTTL past completion

	require.True(t, held(tab, old), "eviction happens only on Submit")
	mustSubmit(t, tab, "trigger")
	require.False(t, held(tab, old), "old expired at its TTL")
	require.True(t, held(tab, young))

	clock.Advance(5 * second)
	mustSubmit(t, tab, "trigger")
	require.False(t, held(tab, young))
	require.Equal(t, jobtable.Stats{Depth: 2, Jobs: 2, Retained: 0, EvictedTTL: 2}, tab.Stats())
}

func TestLRUEviction(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 2})
	a := toState(t, tab, ledgertype.Done)
	b := toState(t, tab, ledgertype.TimedOut)
	c := toState(t, tab, ledgertype.Failed)
	require.True(t, held(tab, a), "eviction happens only on Submit")

	mustSubmit(t, tab, "trigger")
	require.False(t, held(tab, a), "the least recently completed goes first")
	require.True(t, held(tab, b))
	require.True(t, held(tab, c))
	require.Equal(t, jobtable.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedLRU: 1}, tab.Stats())
}

func TestLRUOrderIsCompletionOrder(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 1})
	first := mustSubmit(t, tab, "first")
	second := mustSubmit(t, tab, "second")
	require.NoError(t, errOf(tab.Finish(second, "x"))) // submitted later, completed first
	require.NoError(t, errOf(tab.Finish(first, "y")))

	mustSubmit(t, tab, "trigger")
	require.False(t, held(tab, second))
	require.True(t, held(tab, first))
}

func TestTTLBeforeLRU(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 8, JobTTL: 10 * second, MaxCompleted: 2})
	a := toState(t, tab, ledgertype.Done)
	b := toState(t, tab, ledgertype.Done)
	clock.Advance(10 * second) // a and b expire
	c := toState(t, tab, ledgertype.Done)
	d := toState(t, tab, ledgertype.Done)
	e := toState(t, tab, ledgertype.Done)

	mustSubmit(t, tab, "trigger")
	// TTL removes a and b; then LRU trims c, the oldest of the three left.
	for id, want := range map[string]bool{a: false, b: false, c: false, d: true, e: true} {
		require.Equal(t, want, held(tab, id), id)
	}
	require.Equal(t, jobtable.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedTTL: 2, EvictedLRU: 1}, tab.Stats())
}

func TestNonTerminalNeverEvicted(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 8, JobTTL: second, MaxCompleted: 1})
	pending := toState(t, tab, ledgertype.Pending)
	running := toState(t, tab, ledgertype.Running)
	for range 5 {
		clock.Advance(time24h)
		id := mustSubmit(t, tab, "churn")
		require.NoError(t, errOf(tab.Finish(id, "x")))
	}
	require.Equal(t, ledgertype.Pending, state(t, tab, pending))
	require.Equal(t, ledgertype.Running, state(t, tab, running))
	require.Equal(t, 2, tab.Depth())
}

const time24h = 24 * 60 * 60 * second

func TestDefaultsRetain(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 1})
	id := toState(t, tab, ledgertype.Done)
	clock.Advance(jobtable.DefaultJobTTL - 1)
	mustSubmit(t, tab, "trigger")
	require.True(t, held(tab, id), "kept for DefaultJobTTL")
}

func TestNegativeBoundsRetainForever(t *testing.T) {
	tab, clock := newTable(t, jobtable.Config{MaxQueue: 1, JobTTL: -1, MaxCompleted: -1})
	var ids []string
	for range 50 {
		id := mustSubmit(t, tab, "x")
		require.NoError(t, errOf(tab.Finish(id, "r")))
		ids = append(ids, id)
		clock.Advance(time24h)
	}
	mustSubmit(t, tab, "trigger")
	for _, id := range ids {
		require.True(t, held(tab, id))
	}
}
