package jobapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// CheckInvariants reports every invariant of the server that s violates,
// joined, or nil: its own bookkeeping (see checkInvariants), then its
// store's (the ledger's CheckInvariants). It is for tests, stress runs and
// fuzzing, not for serving: it takes the server's lock and every lock of
// a memory store. FlightsInv, TimersInv and DrainInv are exact once Shutdown
// has returned.
func (s *Server) CheckInvariants() error { return s.exec.checkInvariants() }

// checkInvariants states the invariants of the executor struct as code, each
// clause under its name, and then runs the ledger's own checker.
//
//   - FlightsInv: len(flights) == runners, no entry is nil, and once
//     drained runners == 0 (so flights is empty).
//   - TimersInv: timers >= 0, and once drained timers == 0: no deadline
//     timer is left armed after its work (a job's, an /infer's, a
//     Prefer: wait's; Shutdown waits for the last, stopWaits).
//   - DrainInv: once drained, the store holds no PENDING or RUNNING job
//     but the ones Shutdown left PENDING for the next process (a durable
//     store's, listed in left) that are still PENDING: its Stats().Depth
//     is the count of those, zero on the memory store, and none of them is
//     RUNNING; every runner ends its job before it returns. The clause
//     reads each left job rather than trusting the count of them, which a
//     cancel of a left job after Shutdown, or a cancel that ended a job
//     just as the grace period ended (its runner then takes it for left),
//     made larger than the depth on a sound server; a left job that ended
//     must have ended by such a cancel (FAILED "canceled") or be gone,
//     since no runner ends a job it left. A store that
//     refused a runner's end breaks it: the job is left live, and logged
//     (see record). In shared mode the depth is every replica's, so the
//     clause is not checked there.
//   - AdmitTimersInv: once drained no admission deadline (shared mode) is
//     left armed.
//
// It may run at any time. The clauses that hold once drained are the ones
// that see a leak; tests call it after Shutdown for them. The store's
// invariants are exact only when no call is in flight (ledger.Ledger).
func (e *executor) checkInvariants() error {
	var errs []error
	fail := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}

	e.mu.Lock()
	drained, flights, runners := e.drained, len(e.flights), e.runners
	left := make([]string, 0, len(e.left))
	for id := range e.left {
		left = append(left, id)
	}
	for id, cancel := range e.flights {
		if cancel == nil {
			fail("FlightsInv", "job %s: flight without a cancel", id)
		}
	}
	timers := e.timers.Load()
	admitTimers := len(e.admitTimers)
	e.mu.Unlock()

	if drained && admitTimers != 0 {
		fail("AdmitTimersInv", "drained with %d admission deadlines armed", admitTimers)
	}
	if flights != runners {
		fail("FlightsInv", "%d flights, %d runners not returned", flights, runners)
	}
	if drained && runners != 0 {
		fail("FlightsInv", "drained with %d runners not returned", runners)
	}
	if timers < 0 {
		fail("TimersInv", "%d deadline timers armed: one was retired twice", timers)
	}
	if drained && timers != 0 {
		fail("TimersInv", "drained with %d deadline timers armed: never stopped", timers)
	}
	if drained && e.shared == nil {
		e.checkDrainInv(fail, left)
	}
	if c, ok := ledger.As[ledger.Checker](e.store); ok {
		if err := c.CheckInvariants(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkDrainInv checks DrainInv on a drained server of one process whose
// runners left the jobs left PENDING: the store's depth is the number of
// them still live, each of them PENDING, and each of the others ended by a
// cancel or gone.
func (e *executor) checkDrainInv(fail func(name, format string, args ...any), left []string) {
	live := 0
	for _, id := range left {
		snap, err := e.store.Snapshot(context.Background(), id)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			// Ended since it was left (a cancel), and evicted.
		case err != nil:
			fail("DrainInv", "job %s left PENDING: unreadable: %v", id, err)
		case snap.State.Terminal() && !canceled(snap):
			fail("DrainInv", "job %s left PENDING ended %s %v, not by a cancel", id, snap.State, snap.Err)
		case snap.State.Terminal():
			// Ended since it was left, by a cancel.
		case snap.State != ledgertype.Pending:
			fail("DrainInv", "job %s left PENDING is %s", id, snap.State)
		default:
			live++
		}
	}
	if depth := e.store.Stats().Depth; depth != live {
		fail("DrainInv", "drained with %d jobs PENDING or RUNNING, %d of them left PENDING for the next process", depth, live)
	}
}

// canceled reports whether snap is a job that cancelJob ended: FAILED with
// the cancel's cause, compared by its text, which is all a durable store
// keeps of it.
func canceled(snap ledger.Snapshot) bool {
	return snap.State == ledgertype.Failed && snap.Err != nil && snap.Err.Error() == wireError(ErrCanceled, "").Error()
}
