package jobapi

import (
	"context"
	"time"
)

// deadlineContext returns a context derived from parent that ends with
// cause ErrDeadline after d by the server's clock, its cancel function, and
// its release function, which must be called once, when the work is over:
// it stops the deadline's timer and cancels the context.
//
// The timer is counted in e.timers from when it is armed until it is
// retired: stopped before it fired, or fired. Stop reporting false means
// the timer fired, but with the wall clock its callback runs in a goroutine
// of its own that may not have run yet (time.Timer.Stop does not wait for
// it). So a timer that fired is retired by whichever of its callback and
// release comes first, under e.mu, and once release has returned its timer
// is no longer counted, whatever the clock: TimersInv is then exact at
// quiescence. A timer that is never stopped stays counted until it fires,
// which with the tests' clocks is never.
func (e *executor) deadlineContext(parent context.Context, d time.Duration) (context.Context, context.CancelCauseFunc, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	retired := false // guarded by e.mu; only a timer that fired uses it
	retire := func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !retired {
			retired = true
			e.timers.Add(-1)
		}
	}
	e.timers.Add(1)
	armed := false
	defer func() {
		if !armed { // AfterFunc panicked: no timer, nothing to count
			e.timers.Add(-1)
			cancel(context.Canceled)
		}
	}()
	stop := e.clock.AfterFunc(d, func() {
		retire()
		cancel(ErrDeadline)
	})
	armed = true
	return ctx, cancel, func() {
		if stop() {
			e.timers.Add(-1) // stopped in time: its callback never runs
		} else {
			retire() // it fired; its callback may not have run yet
		}
		cancel(context.Canceled)
	}
}

// jobContext is deadlineContext for a job, from e.base, with its deadline
// d from now. A job recovered from the store may be past its deadline
// already (d <= 0): its context is then ended with cause ErrDeadline at
// once, with no timer, so that its runner ends it TIMEOUT as any job past
// its deadline ends, whatever the clock (a fake one fires a timer due now
// only when it is next moved).
func (e *executor) jobContext(d time.Duration) (context.Context, context.CancelCauseFunc, func()) {
	if d > 0 {
		return e.deadlineContext(e.base, d)
	}
	ctx, cancel := context.WithCancelCause(e.base)
	cancel(ErrDeadline)
	return ctx, cancel, func() { cancel(context.Canceled) }
}

// requestContext is deadlineContext for a request's own work (an /infer, a
// Prefer: wait), under parent, with its deadline d from now, ended early
// with cause ErrShuttingDown by the end of the grace period. Call release
// once, when the work is over.
func (e *executor) requestContext(parent context.Context, d time.Duration) (ctx context.Context, release func()) {
	ctx, cancel, done := e.deadlineContext(parent, d)
	stop := context.AfterFunc(e.base, func() { cancel(ErrShuttingDown) })
	return ctx, func() {
		stop()
		done()
	}
}
