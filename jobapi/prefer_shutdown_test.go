package jobapi_test

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// heldWait is a memory store whose first Wait, once it has its answer,
// reports it on returned and holds it until hold is closed: the handler
// that called it is slow to go on, as a goroutine of a loaded process may
// be.
type heldWait struct {
	store
	once     *sync.Once
	returned chan struct{}
	hold     chan struct{}
}

func (h heldWait) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	snap, err := h.store.Wait(ctx, id)
	h.once.Do(func() {
		close(h.returned)
		<-h.hold
	})
	return snap, err
}

// blockedIn reports whether some goroutine is inside the function named
// fn, by the stacks of all of them.
func blockedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}

// TestPreferWaitEndsBeforeShutdownReturns pins a defect: the wait of a
// POST /jobs with Prefer: wait arms a deadline timer, counted in TimersInv,
// but its handler was no unit of work Shutdown waited for, so Shutdown
// could return, drained, before the handler had stopped the timer, and
// TimersInv failed on a sound server. Shutdown now waits, once the grace
// period is over, for every such wait to end and stop its timer.
func TestPreferWaitEndsBeforeShutdownReturns(t *testing.T) {
	clock := newFakeClock()
	st := heldWait{store: newMemory(t, clock, 8), once: &sync.Once{},
		returned: make(chan struct{}), hold: make(chan struct{})}
	g := newGate()
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock}, nil)
	got := h.postPreferAsync(map[string]any{"task_id": "t"}, "wait=5")
	<-g.started
	h.untilWaiting(1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace
	shut := make(chan error, 1)
	go func() { shut <- h.srv.Shutdown(ctx) }()
	require.ErrorIs(t, <-g.ended, jobapi.ErrShuttingDown)
	<-st.returned // the wait is over; its handler is held before it stops its timer

	returned := false
	until(t, "Shutdown returned, or waits for the wait's handler", func() bool {
		select {
		case <-shut:
			returned = true
			return true
		default:
			return blockedIn("jobapi.(*Server).stopWaits")
		}
	})
	if returned {
		err := h.srv.CheckInvariants()
		close(st.hold)
		<-got
		t.Fatalf("Shutdown returned while a Prefer: wait handler held its timer; invariants: %v", err)
	}
	close(st.hold)
	require.ErrorIs(t, <-shut, context.Canceled)
	require.NoError(t, h.srv.CheckInvariants(), "no deadline timer armed once Shutdown returned")
	require.Zero(t, clock.Pending())
	require.NotEqual(t, -1, (<-got).Status, "the client got a reply")
}
