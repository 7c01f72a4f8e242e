//go:build jobtable_trace

package fuzz

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jobledger/jobledger/jobtable"
)

// noJob is the id a timer, poller or waiter calls on when its slot names
// no job yet: an id the table never issues (its ids are j1, j2 ...), which
// the spec's timers, pollers and waiters may pick as any id of the trace.
const noJob = "none"

// traceHarness is what the threads of one FuzzTrace run share: the table,
// the jobs admitted so far, and the work channel that hands each of them
// to the runners, as the spec's queue.
type traceHarness struct {
	table *jobtable.Table[int, int]
	work  chan string // admitted jobs, each once, in admission order

	mu     sync.Mutex // guards known and panics
	known  []string   // admitted jobs, in the order their Submit returned
	panics []string   // calls that panicked: "thread: value"
}

// admit records a job a Submit admitted and queues it for the runners.
func (h *traceHarness) admit(id string) {
	h.mu.Lock()
	h.known = append(h.known, id)
	h.mu.Unlock()
	h.work <- id
}

// job returns the job slot names, or "", false if fewer jobs were admitted.
func (h *traceHarness) job(slot int) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if slot < len(h.known) {
		return h.known[slot], true
	}
	return "", false
}

// anyJob returns the job slot names among those admitted so far (slot mod
// their number), or "", false if none was: a misuser picks a job of the
// map.
func (h *traceHarness) anyJob(slot int) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.known) == 0 {
		return "", false
	}
	return h.known[slot%len(h.known)], true
}

// guarded runs one call of thread name; a call that panics (a mutant's
// doing) is noted in the log, where no spec action matches it, and
// reported as false.
func (h *traceHarness) guarded(name string, call func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			jobtable.TraceNote("Panic", "")
			h.mu.Lock()
			h.panics = append(h.panics, fmt.Sprintf("%s: %v", name, r))
			h.mu.Unlock()
			ok = false
		}
	}()
	call()
	return true
}

// traceActor is one thread of a run: step makes its next call. A thread
// that has stopped (a misuser whose job was not found, a call that
// panicked) lets its remaining releases pass.
type traceActor struct {
	h       *traceHarness
	th      traceThread
	name    string
	waitCtx context.Context // a live waiter's: ends only to free a stuck one

	stopped bool
	calls   int    // calls made so far (a runner's: of its current job)
	id      string // the job it works on
	outcome int    // a runner's next end: 0 Finish, 1 Fail, 2 Timeout
}

func (a *traceActor) step() {
	if a.stopped {
		return
	}
	if !a.h.guarded(a.name, a.call) {
		a.stopped = true
	}
}

// call makes the thread's next call, as its role in spec/JobTable.tla
// makes it.
func (a *traceActor) call() {
	tab := a.h.table
	switch a.th.role {
	case roleSubmitter:
		if id, err := tab.Submit("task", 0); err == nil {
			a.h.admit(id)
		}
	case roleRunner:
		a.runnerCall()
	case roleTimer:
		id, ok := a.h.job(a.th.slot)
		if !ok {
			id = noJob
		}
		_, _ = tab.Timeout(id, context.DeadlineExceeded)
	case rolePoller:
		if a.calls == 0 {
			var ok bool
			if a.id, ok = a.h.job(a.th.slot); !ok {
				a.id = noJob
			}
			_, _ = tab.Snapshot(a.id)
		} else {
			_, _, _ = tab.Result(a.id)
		}
		a.calls++
	case roleWaiter:
		a.wait()
	case roleMisuser:
		a.misuserCall()
	}
}

// runnerCall: the spec's runner. Start on a job of the work channel (none
// queued: the release passes, as the spec's runner waits for the queue),
// then, started, TakeRequest, then its end; refused, it takes the next.
func (a *traceActor) runnerCall() {
	tab := a.h.table
	switch a.calls {
	case 0:
		select {
		case id := <-a.h.work:
			if _, err := tab.Start(id); err == nil {
				a.id, a.calls = id, 1
			}
		default:
		}
	case 1:
		_, _ = tab.TakeRequest(a.id)
		a.calls = 2
	default:
		switch a.outcome % 3 {
		case 0:
			_, _ = tab.Finish(a.id, 1)
		case 1:
			_, _ = tab.Fail(a.id, errors.New("failed"))
		default:
			_, _ = tab.Timeout(a.id, context.DeadlineExceeded)
		}
		a.outcome++
		a.id, a.calls = "", 0
	}
}

// finishJob ends the job the runner holds, if any: TakeRequest if it has
// not called it yet, then its end.
func (a *traceActor) finishJob() {
	for k := 0; k < 2 && a.calls > 0 && !a.stopped; k++ {
		a.step()
	}
}

// wait: one Wait, with a context that ended before the call (the spec's
// WaitCancel) or one that never ends unless the waiter is found stuck.
func (a *traceActor) wait() {
	id, ok := a.h.job(a.th.slot)
	if !ok {
		id = noJob
	}
	if a.th.flag {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = a.h.table.Wait(ctx, id)
		return
	}
	if _, err := a.h.table.Wait(a.waitCtx, id); errors.Is(err, context.Canceled) {
		// Freed after every job had ended: a lost wakeup, which no
		// spec action matches.
		jobtable.TraceNote("WaitTimeout", id)
	}
}

// misuserCall: the spec's misuser. Start on a job of the map (a Start that
// finds none ends it), then TakeRequest or not, then Finish, whatever each
// returns. With no job admitted yet it makes no call at all.
func (a *traceActor) misuserCall() {
	tab := a.h.table
	switch a.calls {
	case 0:
		var ok bool
		if a.id, ok = a.h.anyJob(a.th.slot); !ok {
			a.stopped = true
			return
		}
		if _, err := tab.Start(a.id); errors.Is(err, jobtable.ErrNotFound) {
			a.stopped = true
			return
		}
	case 1:
		if a.th.flag {
			jobtable.TraceNote("MisuseSkip", a.id)
		} else {
			_, _ = tab.TakeRequest(a.id)
		}
	default:
		_, _ = tab.Finish(a.id, 2)
	}
	a.calls++
}
