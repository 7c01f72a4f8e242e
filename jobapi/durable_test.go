package jobapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
)

// TestDurableStoreKeepsJobsAcrossShutdown: on a durable store (a SQLite
// file, a PostgreSQL database), a job still PENDING when the grace period
// ends is left PENDING, and the next server on the store runs it; a job
// that was running ends FAILED "server shutting down" and stays so; a
// finished job keeps its result.
func TestDurableStoreKeepsJobsAcrossShutdown(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		testDurableAcrossShutdown(t, "sqlite:"+filepath.Join(t.TempDir(), "jobs.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		testDurableAcrossShutdown(t, pgtest.NewDatabase(t))
	})
}

func testDurableAcrossShutdown(t *testing.T, store string) {
	clock := newFakeClock()

	// The first process: one job done, one running, one waiting for the
	// one worker when the grace period ends.
	g1 := newGate()
	cfg := harnessDefaults()
	st1, durable := openStore(t, store, "", cfg, clock, nil)
	srv1, err := jobapi.New(st1, cfg, jobapi.Options{Model: g1, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		LedgerJobTTL: cfg.AsyncJobTTL, Durable: durable})
	require.NoError(t, err)
	ts1 := httptest.NewServer(srv1)
	h1 := &harness{t: t, srv: srv1, ts: ts1, api: newClient(t, ts1), clock: clock}
	done := h1.submit("done", nil)
	require.Equal(t, "done", <-g1.started)
	g1.release <- struct{}{}
	require.Equal(t, client.Done, h1.waitBounded(done).State)
	running := h1.submit("running", nil)
	require.Equal(t, "running", <-g1.started)
	pending := h1.submit("pending", nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace
	_ = srv1.Shutdown(ctx)
	require.ErrorIs(t, <-g1.ended, jobapi.ErrShuttingDown)
	require.NoError(t, srv1.CheckInvariants(), "drained, with one job left PENDING")
	require.Equal(t, client.Pending, h1.snapshot(pending).State, "left for the next process")
	r := h1.snapshot(running)
	require.Equal(t, client.Failed, r.State)
	require.Equal(t, "server shutting down", r.Error)
	ts1.Close()
	require.NoError(t, srv1.Close())
	require.NoError(t, st1.Close())

	// The next process on the same file runs the pending job.
	g2 := newGate()
	h2 := newHarnessStore(t, store, "", jobapi.Options{Model: g2, Clock: clock}, nil)
	require.Equal(t, "pending", <-g2.started)
	g2.release <- struct{}{}
	require.Equal(t, client.Done, h2.waitBounded(pending).State)
	require.Equal(t, client.Failed, h2.snapshot(running).State)
	res, err := h2.api.Result(t.Context(), done)
	require.NoError(t, err)
	require.JSONEq(t, `{"task":"done"}`, string(res.Result))
}
