package ledgertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/ledger"
)

// testStress is the design's stress (stress.LedgerConfig's shape) on one
// store, on the suite's fake clock, which the first submitter moves on so
// that eviction by TTL runs. It runs for half a second (a fifth of it with
// -short) and until 300 jobs were admitted, so that a slow store still
// contests admission and evicts, and never past 20 s. Besides the
// harness's checks, while running and at the end, the depth is back to
// zero and the store's invariants hold.
func testStress(t *testing.T, s Store) {
	cfg := stress.LedgerConfig()
	cfg.Duration = 500 * time.Millisecond
	if testing.Short() {
		cfg.Duration /= 5
	}
	cfg.MinAccepted, cfg.MaxDuration = 300, 20*time.Second
	cfg.Grace = lostWakeupGrace
	f := open(t, s, ledger.Config{MaxQueue: cfg.MaxQueue, JobTTL: cfg.JobTTL, MaxCompleted: cfg.MaxCompleted})
	cfg.Tick = func() { f.clock.Advance(10 * time.Millisecond) }

	res, err := stress.Drive(f.ctx, cfg, stress.StoreLedger{L: f.l})
	require.NoError(t, err)
	for _, v := range res.Violations {
		t.Error(v)
	}
	if res.Accepted < int64(cfg.MinAccepted) {
		t.Logf("stopped at the hard cap of %v with %d jobs admitted", cfg.MaxDuration, res.Accepted)
	}
	require.Equal(t, 0, f.depth(), "the depth returns to zero")
	require.NoError(t, f.checkInvariants(), "quiescent, the store's invariants hold")
	st := f.l.Stats()
	t.Logf("%v: %d admitted, %d rejected, %d polls, %d waits; evicted %d by TTL, %d by LRU",
		res.Elapsed.Round(time.Millisecond), res.Accepted, res.Rejected, res.Polls, res.Waits, st.EvictedTTL, st.EvictedLRU)
	require.Positive(t, res.Accepted)
	require.Positive(t, res.Rejected, "admission was contested")
	require.Positive(t, st.EvictedTTL+st.EvictedLRU, "eviction ran")
}
