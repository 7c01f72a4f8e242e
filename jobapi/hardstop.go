package jobapi

import (
	"context"
	"sync"
)

// hardStop is Shutdown's one bound on the work in flight once its grace
// period is over: the runners (wg) and, in shared mode, the admission
// timers that fired (timerWG) all record their ends through e.writes, and
// a write that never answers (a database connection lost without a reset,
// with no timeout of its own) kept either wait, and Shutdown, blocked for
// ever. Its timer is armed once, by the first wait that sees the grace
// period over, and covers every later wait, so that the bound is HardStop
// in all, not HardStop per wait. Only Shutdown's goroutine uses it, except
// the timer's callback, which closes fired.
//
// once guards the arming of stop; fire guards the log line and
// stopWrites.
type hardStop struct {
	e     *executor
	grace context.Context // Shutdown's ctx: the grace period
	fired chan struct{}   // closed by the timer, HardStop after arming
	once  sync.Once
	stop  func() bool // the timer's stop; nil until armed
	fire  sync.Once
}

// newHardStop returns the bound of a Shutdown whose grace period is grace.
// Call release when Shutdown is done with it.
func (e *executor) newHardStop(grace context.Context) *hardStop {
	return &hardStop{e: e, grace: grace, fired: make(chan struct{})}
}

// await waits until done is closed. Once the grace period is over it arms
// the bound, if no earlier wait did; past it, it ends the store's writes,
// as Close does, so that a hung write ends with its context, and then goes
// on waiting: every unit of work writes through e.writes, and nothing else
// ends it.
func (h *hardStop) await(what string, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-h.grace.Done():
	}
	h.once.Do(func() {
		h.stop = h.e.clock.AfterFunc(HardStop, func() { close(h.fired) })
	})
	select {
	case <-done:
		return
	case <-h.fired:
	}
	h.fire.Do(func() {
		h.e.log.Error("shutdown: work still in flight at the hard stop; ending the store's writes",
			"hard_stop", HardStop.String(), "waiting_for", what)
		h.e.stopWrites()
	})
	<-done
}

// release stops the bound's timer, if it was armed and has not fired.
func (h *hardStop) release() {
	if h.stop != nil {
		h.stop()
	}
}

// waitChan returns a channel closed once wg's count reaches zero. Its
// goroutine ends then; call it only where nothing more is added to wg.
func waitChan(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
