package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

const day = 24 * time.Hour

// testTTLEviction: a terminal job is evicted by the first Submit at or
// after JobTTL past its completion, and not before; Stats counts it.
func testTTLEviction(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8, JobTTL: 10 * time.Second, MaxCompleted: -1})
	old := f.toState(ledgertype.Done)
	f.clock.Advance(5 * time.Second)
	young := f.toState(ledgertype.Failed)
	f.clock.Advance(5 * time.Second) // old is exactly JobTTL past its completion

	require.True(t, f.held(old), "eviction happens only on Submit")
	f.submit("trigger")
	require.False(t, f.held(old), "old expired at its TTL")
	require.True(t, f.held(young))

	f.clock.Advance(5 * time.Second)
	f.submit("trigger")
	require.False(t, f.held(young))
	require.Equal(t, ledger.Stats{Depth: 2, Jobs: 2, Retained: 0, EvictedTTL: 2}, f.l.Stats())
}

// testLRUEviction: beyond MaxCompleted, Submit evicts the least recently
// completed; Stats counts it.
func testLRUEviction(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 2})
	a := f.toState(ledgertype.Done)
	b := f.toState(ledgertype.TimedOut)
	c := f.toState(ledgertype.Failed)
	require.True(t, f.held(a), "eviction happens only on Submit")

	f.submit("trigger")
	require.False(t, f.held(a), "the least recently completed goes first")
	require.True(t, f.held(b))
	require.True(t, f.held(c))
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedLRU: 1}, f.l.Stats())
}

// testLRUOrder: the order of eviction is the order of completion, not of
// submission.
func testLRUOrder(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8, JobTTL: -1, MaxCompleted: 1})
	first := f.submit("first")
	second := f.submit("second")
	f.must(f.l.Finish(f.ctx, second, "x")) // submitted later, completed first
	f.clock.Advance(time.Second)
	f.must(f.l.Finish(f.ctx, first, "y"))

	f.submit("trigger")
	require.False(t, f.held(second))
	require.True(t, f.held(first))
}

// testTTLBeforeLRU: one Submit evicts the expired first, then trims what
// is left to MaxCompleted; Stats tells the two apart. The jobs are all
// submitted before any ends, so that only the trigger's Submit evicts.
func testTTLBeforeLRU(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8, JobTTL: 10 * time.Second, MaxCompleted: 2})
	var ids []string
	for range 5 {
		ids = append(ids, f.submit("t"))
	}
	a, b, c, d, e := ids[0], ids[1], ids[2], ids[3], ids[4]
	f.must(f.l.Finish(f.ctx, a, "r"))
	f.must(f.l.Finish(f.ctx, b, "r"))
	f.clock.Advance(10 * time.Second) // a and b expire
	f.must(f.l.Finish(f.ctx, c, "r"))
	f.clock.Advance(time.Second)
	f.must(f.l.Finish(f.ctx, d, "r"))
	f.must(f.l.Finish(f.ctx, e, "r"))

	f.submit("trigger")
	for id, want := range map[string]bool{a: false, b: false, c: false, d: true, e: true} {
		require.Equal(t, want, f.held(id), id)
	}
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 3, Retained: 2, EvictedTTL: 2, EvictedLRU: 1}, f.l.Stats(),
		"TTL evicted a and b, then the bound evicted c")
}

// testDefaultTTL: a zero JobTTL means DefaultJobTTL.
func testDefaultTTL(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	id := f.toState(ledgertype.Done)
	f.clock.Advance(ledger.DefaultJobTTL - time.Second)
	f.submit("trigger")
	require.True(t, f.held(id), "kept for DefaultJobTTL")
	f.clock.Advance(time.Second)
	f.submit("trigger")
	require.False(t, f.held(id), "evicted once DefaultJobTTL passed")
}

// testNegativeBounds: negative JobTTL and MaxCompleted retain every
// terminal job.
func testNegativeBounds(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1, JobTTL: -1, MaxCompleted: -1})
	var ids []string
	for range 20 {
		ids = append(ids, f.toState(ledgertype.Done))
		f.clock.Advance(day)
	}
	f.submit("trigger")
	for _, id := range ids {
		require.True(t, f.held(id))
	}
	require.Equal(t, ledger.Stats{Depth: 1, Jobs: 21, Retained: 20}, f.l.Stats())
}

// testLiveNeverEvicted: neither TTL nor MaxCompleted evicts a PENDING or
// RUNNING job, however old.
func testLiveNeverEvicted(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8, JobTTL: time.Second, MaxCompleted: 1})
	pending := f.toState(ledgertype.Pending)
	running := f.toState(ledgertype.Running)
	for range 5 {
		f.clock.Advance(day)
		f.toState(ledgertype.Done)
	}
	f.submit("trigger")
	require.Equal(t, ledgertype.Pending, f.snapshot(pending).State)
	require.Equal(t, ledgertype.Running, f.snapshot(running).State)
	require.Equal(t, 3, f.depth())
}
