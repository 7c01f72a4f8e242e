package jobapi_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// TestDrainInvAfterCancelOfLeftJob pins a false alarm of DrainInv: it
// compared the store's depth with the count of jobs the runners had left
// PENDING for the next process, so a cancel of one of them after
// Shutdown (the store stays open for reads and cancels) made the depth
// one less than the count, and the invariant failed on a sound server.
// The clause now counts the left jobs that are still live.
func TestDrainInvAfterCancelOfLeftJob(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarnessStore(t, "sqlite:"+filepath.Join(t.TempDir(), "jobs.db"), "", jobapi.Options{Model: g}, nil)
	srv := h.srv
	running := h.submit("running", nil)
	require.Equal(t, "running", <-g.started)
	left := h.submit("left", nil)
	kept := h.submit("kept", nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace
	_ = srv.Shutdown(ctx)
	require.ErrorIs(t, <-g.ended, jobapi.ErrShuttingDown)
	require.NoError(t, srv.CheckInvariants(), "drained, two jobs left PENDING")
	require.Equal(t, client.Failed, h.snapshot(running).State)

	_, err := h.api.Cancel(t.Context(), left)
	require.NoError(t, err)
	require.Equal(t, client.Pending, h.snapshot(kept).State)
	require.NoError(t, srv.CheckInvariants(), "one job left PENDING, the other cancelled since")
}
