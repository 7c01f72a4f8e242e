package jobtable_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/jobtable"
)

var stressDuration = flag.Duration("stress.duration", 3*time.Second,
	"how long TestStress runs (a tenth of it with -short)")

// TestStress is the design's stress test (stress.LedgerConfig's shape) on
// one table with the default id source, on a fake clock that the first
// submitter moves on so that eviction by TTL runs. It lasts its duration
// and until 1000 jobs were admitted, so that a starved machine still
// contests admission and evicts, but at most a minute. Besides the
// harness's checks, while running and at the end, the depth is back to
// zero and the table's invariants hold, checked every millisecond while
// the end of the run waits for the waiters.
func TestStress(t *testing.T) {
	cfg := stress.LedgerConfig()
	cfg.Duration = *stressDuration
	if testing.Short() {
		cfg.Duration /= 10
	}
	cfg.MinAccepted, cfg.MaxDuration = 1000, time.Minute
	clock := fakeclock.New()
	tab, err := jobtable.New[string, string](jobtable.Config{
		MaxQueue: cfg.MaxQueue, JobTTL: cfg.JobTTL, MaxCompleted: cfg.MaxCompleted,
		Now:   clock.Now,
		NewID: jobtable.DefaultNewID, // the default source: its ids must be unique too
	})
	require.NoError(t, err)
	cfg.Tick = func() { clock.Advance(10 * time.Millisecond) }
	cfg.Check = tab.CheckInvariants

	res, err := stress.Drive(context.Background(), cfg, stress.TableLedger{T: tab})
	require.NoError(t, err)
	for _, v := range res.Violations {
		t.Error(v)
	}
	require.Equal(t, 0, tab.Depth(), "depth returns to zero")
	require.NoError(t, tab.CheckInvariants())
	st := tab.Stats()
	t.Logf("%v: %d admitted, %d rejected, %d polls, %d waits; evicted %d by TTL, %d by LRU",
		res.Elapsed.Round(time.Millisecond), res.Accepted, res.Rejected, res.Polls, res.Waits, st.EvictedTTL, st.EvictedLRU)
	require.Positive(t, res.Accepted)
	require.Positive(t, res.Rejected, "admission was contested")
	require.Positive(t, st.EvictedTTL+st.EvictedLRU, "eviction ran")
}
