package httpstress_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/stress/httpstress"
	"github.com/jobledger/jobledger/linearizability"
)

// shortHTTPStress is the HTTP level's default shape, shortened for the test
// suite: 300 ms or 20,000 operations, whichever comes first.
func shortHTTPStress() httpstress.HTTPConfig {
	cfg := httpstress.DefaultHTTPConfig()
	cfg.Duration = 300 * time.Millisecond
	cfg.MaxOps = 20_000
	cfg.MaxQueue = 2
	cfg.Progress = nil
	return cfg
}

func TestHTTPStressLinearizable(t *testing.T) {
	// A run makes few submits with Prefer: wait, and the queue of 2 may
	// refuse them all: up to three runs, each checked whole, until one of
	// them has a submit that waited for its job.
	for run := 1; checkHTTPStress(t) == 0; run++ {
		if run == 3 {
			t.Fatal("no submit with Prefer: wait waited for its job, in 3 runs")
		}
	}
}

// checkHTTPStress runs a short HTTP stress, checks its history, and
// returns how many submits with Prefer: wait waited for their jobs.
func checkHTTPStress(t *testing.T) int {
	t.Helper()
	cfg := shortHTTPStress()
	res, err := httpstress.RunHTTP(context.Background(), cfg)
	require.NoError(t, err)
	require.Empty(t, res.Violations)
	require.Positive(t, res.Accepted)
	require.Positive(t, res.Rejected, "admission was not contested")

	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, KnowsTTL: true, VisualizeDir: t.TempDir()})
	require.Equal(t, linearizability.Linearizable, rep.Verdict, "%s; visualization: %s", rep.Message, rep.Visualization)
	t.Logf("%v: %d ops, %d accepted, %d rejected, %d lost; %d job partitions (largest %d) in %v, admission %d ops in %d segments in %v",
		res.Elapsed, len(res.History), res.Accepted, res.Rejected, res.Lost,
		rep.JobPartitions, rep.LargestPartition, rep.JobCheck, rep.AdmissionOps, rep.AdmissionSegments, rep.AdmissionCheck)

	// Submits with Prefer: wait were recorded, and their jobs ended within
	// the wait (the server's async_timeout is far below it). A 202 that
	// came back before its wait could have run out is the server's answer
	// for a job evicted before the wait began (retention here is 5 ms),
	// which is legal; one that came after it is a wait that ran out.
	waited := map[linearizability.Outcome]int{}
	ranOut := 0
	for _, op := range res.History {
		if op.Input.(linearizability.Input).Kind == linearizability.SubmitWait {
			out := op.Output.(linearizability.Output)
			waited[out.Outcome]++
			if out.Outcome == linearizability.Deadline && out.Waited > 0 && op.Return-op.Call >= out.Waited {
				ranOut++
			}
		}
	}
	t.Logf("submits with Prefer: wait: %v, %d of the 202s after the whole wait", waited, ranOut)
	require.Positive(t, len(waited), "no submit with Prefer: wait")
	require.Zero(t, ranOut, "a job outlived async_timeout and a wait of a second")

	// Keyed submits were recorded, and checked by the key model: some
	// created a job, some replayed one, some met another submit on a
	// fresh key at once.
	require.Positive(t, rep.KeyedJobs, "no keyed submit created a job")
	require.Positive(t, res.Replays, "no keyed submit was a replay")
	t.Logf("keyed: %d jobs under %d keys, %d replays, %d 422s", rep.KeyedJobs, rep.KeyPartitions, res.Replays, res.Conflicts)

	// The pollers walked the listing, and every walk that ended lists what
	// the history says it must.
	require.NotEmpty(t, res.Walks, "no walk of the listing")
	require.NoError(t, linearizability.CheckRecordedWalks(res.History, res.Walks, false))

	// The recorder keeps expires_at: the same history, checked as from a
	// server that does not know its TTL, has terminal views carrying it.
	rep = linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, NoVisualize: true})
	require.Equal(t, linearizability.Violation, rep.Verdict, "terminal views without expires_at")
	require.Equal(t, "job", rep.Model)
	return waited[linearizability.OK]
}

func TestHTTPStressRejectsBadConfig(t *testing.T) {
	cfg := shortHTTPStress()
	cfg.WaitTimeout = 0
	_, err := httpstress.RunHTTP(context.Background(), cfg)
	require.Error(t, err)
}
