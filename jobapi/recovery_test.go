package jobapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// recovering is a memory store that answers Recovered with the jobs it
// was filled with, as a durable store reopened on them would: the server
// under test runs them, through the store's real calls.
type recovering struct {
	store
	pending []ledger.Snapshot
	asked   int // calls of Recovered
}

func (r *recovering) Recovered(context.Context) ([]ledger.Snapshot, error) {
	r.asked++
	return r.pending, nil
}

// submitTo admits a job to store s as an earlier process would have, and
// returns its snapshot.
func submitTo(t *testing.T, s store, taskID string) ledger.Snapshot {
	t.Helper()
	ctx := context.Background()
	id, _, err := s.Submit(ctx, ledger.Submission{TaskID: taskID}, jobapi.Request{TaskID: taskID})
	require.NoError(t, err)
	snap, err := s.Snapshot(ctx, id)
	require.NoError(t, err)
	return snap
}

// TestRecoveredJobsRun: at New, the server starts a runner for every job
// its store recovered, each with its deadline still counted from its
// admission: one already past it ends TIMEOUT at once, without running;
// the others run, and end TIMEOUT at admission plus async_timeout, not
// async_timeout after the restart.
func TestRecoveredJobsRun(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Second
	clock := newFakeClock()
	mem := newMemory(t, clock, 8)
	stale := submitTo(t, mem, "stale") // admitted at t0
	clock.Advance(20 * time.Second)
	slow := submitTo(t, mem, "slow") // t0+20s: its deadline is t0+50s
	clock.Advance(10 * time.Second)
	quick := submitTo(t, mem, "quick")
	clock.Advance(5 * time.Second) // the restart, at t0+35s: stale is 5 s past its deadline
	rec := &recovering{store: mem, pending: []ledger.Snapshot{stale, slow, quick}}

	g := newGate()
	h := newHarnessOn(t, rec, jobapi.Options{Model: g, Clock: clock}, func(c *jobapi.Config) {
		c.Workers = 2
		c.AsyncTimeout = timeout
	})
	require.Equal(t, 1, rec.asked)

	r := h.waitBounded(stale.ID)
	require.Equal(t, client.TimedOut, r.State, "past its deadline at the restart: %+v", r)
	require.Equal(t, "deadline exceeded", r.Error)
	require.Zero(t, r.StartedAt, "it never ran")

	started := map[string]bool{<-g.started: true, <-g.started: true}
	require.Equal(t, map[string]bool{"slow": true, "quick": true}, started, "the others run")
	g.release <- struct{}{}
	until(t, "one recovered job done", func() bool {
		return h.snapshot(quick.ID).State == client.Done || h.snapshot(slow.ID).State == client.Done
	})
	done, running := quick.ID, slow.ID
	if h.snapshot(slow.ID).State == client.Done {
		done, running = slow.ID, quick.ID
	}
	_, err := h.api.Result(t.Context(), done)
	require.NoError(t, err)

	// The job still running has its deadline at its admission plus 30 s.
	left := map[string]time.Duration{slow.ID: 15 * time.Second, quick.ID: 25 * time.Second}[running]
	clock.Advance(left - time.Second)
	require.Equal(t, client.Running, h.snapshot(running).State)
	clock.Advance(time.Second)
	r = h.waitBounded(running)
	require.Equal(t, client.TimedOut, r.State, "%+v", r)
	require.ErrorIs(t, <-g.ended, jobapi.ErrDeadline)
}

// TestNothingRecoveredFromMemory: a server on its own memory store starts
// with no job.
func TestNothingRecoveredFromMemory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newGate(), nil)
	require.Contains(t, string(h.get("/metrics").Raw), "jobledger_jobs_held 0")
}
