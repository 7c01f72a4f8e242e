package jobapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// hungFinish is a memory store whose Finish never answers until its
// context ends, as a write on a black-holed database connection with no
// timeout of its own; entered receives each Finish's job id as it blocks.
type hungFinish struct {
	store
	entered chan string
}

func (h hungFinish) Finish(ctx context.Context, id string, _ json.RawMessage) (ledger.Snapshot, error) {
	h.entered <- id
	<-ctx.Done()
	return ledger.Snapshot{}, ctx.Err()
}

// TestShutdownHardStopEndsHungWrites pins a defect: every runner's write
// went through a context that only Close ended, so a store write that
// never answered kept its runner counted and Shutdown blocked forever,
// however short its ctx. Once the grace period is over, Shutdown now waits
// jobapi.HardStop for the work in flight, then ends the store's writes:
// the hung Finish returns, the runner falls back to FAILED "job store
// failure" (which this store records), and Shutdown returns.
func TestShutdownHardStopEndsHungWrites(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	st := hungFinish{store: newMemory(t, clock, 8), entered: make(chan string, 1)}
	g := newGate()
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock}, nil)
	t.Cleanup(func() { _ = h.srv.Close() }) // before the harness's: frees a runner the defect left hung
	id := h.submit("hung", nil)
	require.Equal(t, "hung", <-g.started)
	g.release <- struct{}{}
	require.Equal(t, id, <-st.entered, "the runner's Finish hangs")

	grace, endGrace := context.WithCancel(context.Background())
	shut := make(chan error, 1)
	go func() { shut <- h.srv.Shutdown(grace) }()
	endGrace()
	// The job's deadline timer, its runner not having returned, and the
	// hard stop's.
	until(t, "the hard stop armed", func() bool { return clock.Pending() == 2 })
	clock.Advance(jobapi.HardStop)
	require.ErrorIs(t, received(t, shut, "Shutdown returned at the hard stop"), context.Canceled)
	require.NoError(t, h.srv.CheckInvariants())
	r := h.snapshot(id)
	require.Equal(t, client.Failed, r.State, "%+v", r)
	require.Equal(t, "job store failure", r.Error)
}
