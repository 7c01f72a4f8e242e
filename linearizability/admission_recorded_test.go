package linearizability_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/internal/stress/httpstress"
	"github.com/jobledger/jobledger/linearizability"
)

// The sweep (admission_decide.go) on histories that real stress runs
// recorded, where admission_decide_test.go generates its own. These tests
// are external: they record through package stress, which imports this
// one.

// TestAdmissionSweepOnRecordedHistories compares the two on the projections
// of short real stress runs, at the table and through HTTP, cut into pieces
// small enough for porcupine.
func TestAdmissionSweepOnRecordedHistories(t *testing.T) {
	cfg := stress.DefaultConfig()
	cfg.Duration, cfg.MaxOps, cfg.MaxQueue, cfg.Progress = 100*time.Millisecond, 3000, 2, nil
	res, err := stress.Run(t.Context(), cfg)
	require.NoError(t, err)
	hcfg := httpstress.DefaultHTTPConfig()
	hcfg.Duration, hcfg.MaxOps, hcfg.MaxQueue, hcfg.Progress = 100*time.Millisecond, 1500, 2, nil
	hres, err := httpstress.RunHTTP(t.Context(), hcfg)
	require.NoError(t, err)

	var c linearizability.DiffCounts
	for _, run := range []struct {
		proj []porcupine.Operation
		http bool
	}{
		{linearizability.AdmissionProjection(res.History), false},
		{linearizability.HTTPAdmissionProjection(hres.History, false), true},
	} {
		require.True(t, linearizability.DecideAdmission(run.proj, 2, run.http).Linearizable)
		for _, piece := range linearizability.Prefixes(run.proj, 30) {
			linearizability.Differential(t, &c, piece, 2, run.http)
		}
	}
	t.Log(c)
}

// TestAdmissionSweepWindow: a violation in a long history is drawn on a
// small window around it, which porcupine rejects on its own.
func TestAdmissionSweepWindow(t *testing.T) {
	cfg := stress.DefaultConfig()
	cfg.Duration, cfg.MaxOps, cfg.MaxQueue, cfg.Progress = 200*time.Millisecond, 20_000, 2, nil
	res, err := stress.Run(t.Context(), cfg)
	require.NoError(t, err)
	proj := linearizability.AdmissionProjection(res.History)
	linearizability.SortByCall(proj)
	require.Greater(t, len(proj), 1000)
	// Three submits accepted at one instant in the middle, at bound 2.
	mid := proj[len(proj)/2].Call
	for range 3 {
		proj = append(proj, porcupine.Operation{Input: linearizability.Input{Kind: linearizability.Submit}, Output: linearizability.Output{Outcome: linearizability.OK, ID: "extra"}, Call: mid, Return: mid})
	}
	v := linearizability.DecideAdmission(proj, cfg.MaxQueue, false)
	require.False(t, v.Linearizable)
	require.Less(t, len(v.Window), 3*linearizability.WindowOps, v.Message)
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(linearizability.AdmissionModel(cfg.MaxQueue), v.Window, 10*time.Second))
	require.LessOrEqual(t, v.Window[0].Call, mid)
	require.Contains(t, v.Message, fmt.Sprintf("survives time %d ", mid))
	t.Logf("%d operations; window %s of %d operations: %s", len(proj), v.Where, len(v.Window), v.Message)
}
