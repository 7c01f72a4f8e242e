package jobapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// hungTimeout is a replica's view of a hub that claims nothing, so that a
// job stays PENDING until its admission deadline, and whose Timeout never
// answers until its context ends, as a write on a black-holed database
// connection; entered receives each Timeout's job id as it blocks.
type hungTimeout struct {
	*view
	entered chan string
}

func (h hungTimeout) Claim(context.Context) (ledger.Snapshot, jobapi.Request, error) {
	return ledger.Snapshot{}, jobapi.Request{}, ledger.ErrNoWork
}

func (h hungTimeout) Timeout(ctx context.Context, id string, _ error) (ledger.Snapshot, error) {
	h.entered <- id
	<-ctx.Done()
	return ledger.Snapshot{}, ctx.Err()
}

// TestSharedShutdownHardStopEndsHungTimeout pins a defect: the hard stop
// bounded only the wait for the runners, while Shutdown waited for the
// admission timers that had fired (timerWG) with no bound, so that one
// whose TIMEOUT write never answered blocked Shutdown for ever. The one
// hard-stop bound now covers that wait too: past it the store's writes
// end, the hung Timeout returns, and Shutdown returns.
func TestSharedShutdownHardStopEndsHungTimeout(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	hb := newHub(t, clock, 8)
	v := hungTimeout{view: hb.view(), entered: make(chan string, 1)}
	h := newHarnessOn(t, v, jobapi.Options{Model: newGate(), Clock: clock}, nil)
	t.Cleanup(func() { _ = h.srv.Close() }) // before the harness's: frees a timer the defect left hung
	id := h.submit("hung", nil)
	advanced := make(chan struct{}) // the timer's callback runs in Advance
	go func() {
		defer close(advanced)
		clock.Advance(jobapi.DefaultConfig().AsyncTimeout)
	}()
	require.Equal(t, id, received(t, v.entered, "the admission timer's Timeout hangs"))

	grace, endGrace := context.WithCancel(context.Background())
	endGrace()
	shut := make(chan error, 1)
	go func() { shut <- h.srv.Shutdown(grace) }()
	// The claimer's recheck timer (due in a second) stops as it returns;
	// the hard stop's is the one left.
	until(t, "the hard stop armed", func() bool {
		return clock.Pending() == 1 && clock.PendingIn(jobapi.HardStop) == 1
	})
	clock.Advance(jobapi.HardStop)
	err := received(t, shut, "Shutdown returned at the hard stop")
	require.True(t, err == nil || errors.Is(err, context.Canceled), "%v", err)
	received(t, advanced, "the admission timer returned")
	require.NoError(t, h.srv.CheckInvariants())
}
