package jobapi

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Shared mode: the store has a Shared side (ledger.AsShared), so several
// servers, replicas on one database, share its jobs. Then no job gets a
// runner at admission. Instead one claimer per server takes the oldest
// claimable job from the store whenever a worker is free (Claim takes and
// starts it in one step, under a lease), so that a job admitted by a busy
// replica runs on an idle one; the admitting replica keeps each of its
// jobs' admission deadlines with one timer per job; and the end of a job on
// any replica, which every replica hears (OnEnd), cancels the model call
// running it here. Nothing is recovered at New: the claimers of every
// replica pick up the PENDING jobs, each past its deadline ending TIMEOUT
// at once.

// claimRecheck bounds how long an idle claimer waits for the store's Work
// signal before it claims again, so that a signal lost with a failing
// database connection delays a job by at most this much.
const claimRecheck = time.Second

// endRing is how many of the latest ends onEnd remembers, so that an end
// heard between a job's Claim and the registration of its flight still
// cancels it (see endedSince).
const endRing = 256

// errJobEnded is the cause given to the context of a job that ended while
// this server ran it: a cancel or a deadline on another replica, or the
// reaper. The job is terminal already, so nothing more is recorded.
var errJobEnded = errors.New("jobapi: job ended")

// startShared registers the server for the store's ends and starts its
// claimer, counted in wg. New calls it before the server is returned.
func (e *executor) startShared() {
	e.shared.OnEnd(e.onEnd)
	if !e.enter() {
		return // unreachable: New has not returned the server yet
	}
	go e.claimJobs()
}

// claimJobs is the claimer: while the server lives, it takes the free
// workers (one at least), then claims as many of the oldest claimable jobs
// at once (the store takes concurrent Claims together), and runs each;
// when nothing is claimable it waits for the store's Work signal, at most
// claimRecheck. Once Shutdown has begun it claims nothing more, so that
// the jobs nobody has claimed stay PENDING for the other replicas or the
// next process: a job claimed in the grace period could not be given back
// (a claim starts the job, and a job runs at most once), so one claimed
// shortly before the grace period ended would end FAILED "server shutting
// down" without having run, where another replica could have run it. Its
// loop is bounded by the server's life: each turn either claims a job or
// waits, and the start of the shutdown ends both.
func (e *executor) claimJobs() {
	defer e.wg.Done()
	for {
		if err := e.workers.Acquire(e.base, 1); err != nil {
			return // the grace period is over
		}
		// Acquire may succeed on a free worker after Shutdown has begun (or
		// even after the grace period, when base ended too).
		if e.isClosed() {
			e.workers.Release(1)
			return
		}
		n := 1
		for n < claimBatch && e.workers.TryAcquire(1) {
			n++
		}
		before := e.endCount()
		var claimed atomic.Int64
		var wg sync.WaitGroup // the claimer's own count in e.wg covers these
		for range n - 1 {
			wg.Go(func() {
				if e.claimOne(before) {
					claimed.Add(1)
				}
			})
		}
		if e.claimOne(before) {
			claimed.Add(1)
		}
		wg.Wait()
		if claimed.Load() == 0 && !e.awaitWork() {
			return
		}
	}
}

// claimBatch bounds the Claims the claimer sends at once.
const claimBatch = 64

// claimOne claims a job on a worker the claimer took and runs it, or gives
// the worker back; it reports whether it claimed one. before is the count
// of ends heard before the Claim (see runClaimed).
func (e *executor) claimOne(before uint64) bool {
	// e.writes, not e.base: a Claim given up half way could start a job
	// that nobody here runs, RUNNING until its lease lapses. A Claim in
	// flight as Shutdown begins may still return a job: it runs in the
	// grace period, or, once that is over, ends FAILED "server shutting
	// down" (runJob), as a job this replica was running would.
	snap, req, err := e.shared.Claim(e.writes)
	if err == nil {
		e.runClaimed(snap, req, before) // the worker passes to it
		return true
	}
	e.workers.Release(1)
	switch {
	case errors.Is(err, ledger.ErrNoWork):
	case snap.ID != "":
		// Claimed and started, but its request cannot be read (it does
		// not decode): end it rather than leave it RUNNING here, under a
		// lease this replica renews.
		e.log.Error("job cannot start", "job_id", snap.ID, "error", err)
		e.record(snap.ID, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
	default:
		// The outcome is unknown: a job this Claim started, if any, is
		// held by nobody here, so its lease is not renewed and a reaper
		// ends it when it lapses, or its admitting replica's timer at its
		// deadline, whichever comes first.
		e.log.Error("job store failed", "op", "claim", "error", err)
	}
	return false
}

// awaitWork blocks until the store signals work or claimRecheck passes
// (true: claim again), or Shutdown begins (false).
func (e *executor) awaitWork() bool {
	recheck := make(chan struct{})
	stop := e.clock.AfterFunc(claimRecheck, func() { close(recheck) })
	defer stop()
	select {
	case <-e.shared.Work():
	case <-recheck:
	case <-e.closing:
		return false
	}
	return true
}

// runClaimed starts the runner of a job the claimer claimed, on the worker
// it acquired. The job's deadline is its admission's, CreatedAt plus
// async_timeout, counted on the shared clock from StartedAt, the claim's
// reading of it; one past it ends TIMEOUT at once. before is the count of
// ends heard before the Claim: an end heard since cancels the job here, as
// onEnd would have had its flight been registered.
func (e *executor) runClaimed(snap ledger.Snapshot, req Request, before uint64) {
	ctx, cancel, release := e.jobContext(snap.CreatedAt.Add(e.timeout).Sub(snap.StartedAt))
	e.mu.Lock()
	e.flights[snap.ID] = cancel
	e.runners++
	e.wg.Add(1) // the claimer's own count keeps wg above zero
	ended, known := e.endedSinceLocked(snap.ID, before)
	e.mu.Unlock()
	if !known {
		// More ends than the ring holds were heard meanwhile: ask the store.
		cur, err := e.store.Snapshot(e.writes, snap.ID)
		ended = errors.Is(err, ledger.ErrNotFound) || (err == nil && cur.State.Terminal())
	}
	if ended {
		cancel(errJobEnded)
	}
	go e.runStarted(ctx, snap, req, release)
}

// onEnd is the store's OnEnd callback, for the end of any job on any
// replica: it remembers the end, stops the job's admission deadline if it
// was admitted here, and cancels its model call if it runs here. It does
// not block: the store calls it from its listener. Once the server is
// drained (or closed) it returns at once: no model call runs here, no
// admission deadline is armed and nothing claims any more, and the ledger
// keeps calling it, having no way to unregister it.
func (e *executor) onEnd(snap ledger.Snapshot) {
	if e.endsOff.Load() {
		return
	}
	e.mu.Lock()
	e.ended[e.ends%endRing] = snap.ID
	e.ends++
	cancel := e.flights[snap.ID]
	t := e.admitTimers[snap.ID]
	delete(e.admitTimers, snap.ID)
	e.mu.Unlock()
	t.halt()
	if cancel != nil {
		cancel(errJobEnded)
	}
}

// endCount is the number of ends onEnd has heard.
func (e *executor) endCount() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ends
}

// endedSinceLocked reports whether onEnd heard the end of job id after the
// first before ends, and known false when the ring no longer holds all of
// them. e.mu must be held.
func (e *executor) endedSinceLocked(id string, before uint64) (ended, known bool) {
	if e.ends-before > endRing {
		return false, false
	}
	for n := before; n < e.ends; n++ {
		if e.ended[n%endRing] == id {
			return true, true
		}
	}
	return false, true
}

// admitTimer is one job's admission deadline in admitTimers. stop is
// written once, under e.mu, when the timer has been made; nil before.
type admitTimer struct {
	stop func() bool
}

// halt stops the timer of t, if t has one yet; a nil t has none.
func (t *admitTimer) halt() {
	if t != nil && t.stop != nil {
		t.stop()
	}
}

// armAdmission arms the admission deadline of job id, admitted here: at
// async_timeout from now, unless onEnd hears its end first, the job ends
// TIMEOUT if it is not terminal yet, wherever it is (a replica running it
// hears the end and cancels its model call). before is the count of ends
// heard before the Submit. A timer neither fired nor stopped is in
// admitTimers (AdmitTimersInv); Shutdown stops those left once the grace
// period is over.
//
// The entry goes in before the timer is made, so that a timer firing at
// once finds its job armed; a timer whose entry left meanwhile (it fired,
// or onEnd or Shutdown took it before its stop was set) is stopped here.
func (e *executor) armAdmission(id string, before uint64) {
	t := &admitTimer{}
	e.mu.Lock()
	ended, known := e.endedSinceLocked(id, before)
	if e.timersStopped || (ended && known) {
		e.mu.Unlock()
		return
	}
	e.admitTimers[id] = t
	e.mu.Unlock()
	stop := e.clock.AfterFunc(e.timeout, func() { e.admissionDeadline(id) })
	e.mu.Lock()
	still := e.admitTimers[id] == t
	if still {
		t.stop = stop
	}
	e.mu.Unlock()
	if !still {
		stop()
	}
}

// admissionDeadline is the admission timer of job id firing: unless the
// timer was stopped meanwhile, it ends the job TIMEOUT, which does nothing
// to a job already terminal. Shutdown waits for it (timerWG).
func (e *executor) admissionDeadline(id string) {
	e.mu.Lock()
	_, armed := e.admitTimers[id]
	delete(e.admitTimers, id)
	armed = armed && !e.timersStopped
	if armed {
		e.timerWG.Add(1)
	}
	e.mu.Unlock()
	if !armed {
		return
	}
	defer e.timerWG.Done()
	e.record(id, ledgertype.TimedOut, nil, wireError(ErrDeadline, ""))
}

// stopAdmissions stops every admission timer left and waits for those that
// fired to record their ends, within Shutdown's hard stop: a TIMEOUT whose
// write hangs past it fails with the store's writes. Shutdown calls it once
// the runners are done or the grace period is over: the jobs still PENDING
// are left for the other replicas or the next process, whose claims end
// them TIMEOUT once past their deadline.
func (e *executor) stopAdmissions(bound *hardStop) {
	e.mu.Lock()
	e.timersStopped = true
	timers := e.admitTimers
	e.admitTimers = map[string]*admitTimer{}
	e.mu.Unlock()
	for _, t := range timers {
		t.halt()
	}
	bound.await("admission timers", waitChan(&e.timerWG))
}

// sharedOf returns the Shared side of store, or nil for a store of one
// process.
func sharedOf(store ledger.Ledger[Request, json.RawMessage]) ledger.Shared[Request] {
	if sh, ok := ledger.AsShared(store); ok {
		return sh
	}
	return nil
}
