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
// The timer is counted in s.timers from when it is armed until it is
// retired: stopped before it fired, or fired. Stop reporting false means
// the timer fired, but with the wall clock its callback runs in a goroutine
// of its own that may not have run yet (time.Timer.Stop does not wait for
// it). So a timer that fired is retired by whichever of its callback and
// release comes first, under s.mu, and once release has returned its timer
// is no longer counted, whatever the clock: TimersInv is then exact at
// quiescence. A timer that is never stopped stays counted until it fires,
// which with the tests' clocks is never.
func (s *Server) deadlineContext(parent context.Context, d time.Duration) (context.Context, context.CancelCauseFunc, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	retired := false // guarded by s.mu; only a timer that fired uses it
	retire := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !retired {
			retired = true
			s.timers.Add(-1)
		}
	}
	s.timers.Add(1)
	armed := false
	defer func() {
		if !armed { // AfterFunc panicked: no timer, nothing to count
			s.timers.Add(-1)
			cancel(context.Canceled)
		}
	}()
	stop := s.clock.AfterFunc(d, func() {
		retire()
		cancel(ErrDeadline)
	})
	armed = true
	return ctx, cancel, func() {
		if stop() {
			s.timers.Add(-1) // stopped in time: its callback never runs
		} else {
			retire() // it fired; its callback may not have run yet
		}
		cancel(context.Canceled)
	}
}

// jobContext is deadlineContext for a job, from s.base, with its deadline
// d from now. A job recovered from the store may be past its deadline
// already (d <= 0): its context is then ended with cause ErrDeadline at
// once, with no timer, so that its runner ends it TIMEOUT as any job past
// its deadline ends, whatever the clock (a fake one fires a timer due now
// only when it is next moved).
func (s *Server) jobContext(d time.Duration) (context.Context, context.CancelCauseFunc, func()) {
	if d > 0 {
		return s.deadlineContext(s.base, d)
	}
	ctx, cancel := context.WithCancelCause(s.base)
	cancel(ErrDeadline)
	return ctx, cancel, func() { cancel(context.Canceled) }
}
