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
func (s *Server) startShared() {
	s.shared.OnEnd(s.onEnd)
	if !s.enter() {
		return // unreachable: New has not returned the server yet
	}
	go s.claimJobs()
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
func (s *Server) claimJobs() {
	defer s.wg.Done()
	for {
		if err := s.workers.Acquire(s.base, 1); err != nil {
			return // the grace period is over
		}
		// Acquire may succeed on a free worker after Shutdown has begun (or
		// even after the grace period, when base ended too).
		if s.isClosed() {
			s.workers.Release(1)
			return
		}
		n := 1
		for n < claimBatch && s.workers.TryAcquire(1) {
			n++
		}
		before := s.endCount()
		var claimed atomic.Int64
		var wg sync.WaitGroup // the claimer's own count in s.wg covers these
		for range n - 1 {
			wg.Go(func() {
				if s.claimOne(before) {
					claimed.Add(1)
				}
			})
		}
		if s.claimOne(before) {
			claimed.Add(1)
		}
		wg.Wait()
		if claimed.Load() == 0 && !s.awaitWork() {
			return
		}
	}
}

// claimBatch bounds the Claims the claimer sends at once.
const claimBatch = 64

// claimOne claims a job on a worker the claimer took and runs it, or gives
// the worker back; it reports whether it claimed one. before is the count
// of ends heard before the Claim (see runClaimed).
func (s *Server) claimOne(before uint64) bool {
	// s.writes, not s.base: a Claim given up half way could start a job
	// that nobody here runs, RUNNING until its lease lapses. A Claim in
	// flight as Shutdown begins may still return a job: it runs in the
	// grace period, or, once that is over, ends FAILED "server shutting
	// down" (runJob), as a job this replica was running would.
	snap, req, err := s.shared.Claim(s.writes)
	if err == nil {
		s.runClaimed(snap, req, before) // the worker passes to it
		return true
	}
	s.workers.Release(1)
	switch {
	case errors.Is(err, ledger.ErrNoWork):
	case snap.ID != "":
		// Claimed and started, but its request cannot be read (it does
		// not decode): end it rather than leave it RUNNING here, under a
		// lease this replica renews.
		s.log.Error("job cannot start", "job_id", snap.ID, "error", err)
		s.record(snap.ID, ledgertype.Failed, nil, wireError(ErrStoreFailed, ""))
	default:
		// The outcome is unknown: a job this Claim started, if any, is
		// held by nobody here, so its lease is not renewed and a reaper
		// ends it when it lapses, or its admitting replica's timer at its
		// deadline, whichever comes first.
		s.log.Error("job store failed", "op", "claim", "error", err)
	}
	return false
}

// awaitWork blocks until the store signals work or claimRecheck passes
// (true: claim again), or Shutdown begins (false).
func (s *Server) awaitWork() bool {
	recheck := make(chan struct{})
	stop := s.clock.AfterFunc(claimRecheck, func() { close(recheck) })
	defer stop()
	select {
	case <-s.shared.Work():
	case <-recheck:
	case <-s.closing:
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
func (s *Server) runClaimed(snap ledger.Snapshot, req Request, before uint64) {
	ctx, cancel, release := s.jobContext(snap.CreatedAt.Add(s.cfg.AsyncTimeout).Sub(snap.StartedAt))
	s.mu.Lock()
	s.flights[snap.ID] = cancel
	s.runners++
	s.wg.Add(1) // the claimer's own count keeps wg above zero
	ended, known := s.endedSinceLocked(snap.ID, before)
	s.mu.Unlock()
	if !known {
		// More ends than the ring holds were heard meanwhile: ask the store.
		cur, err := s.store.Snapshot(s.writes, snap.ID)
		ended = errors.Is(err, ledger.ErrNotFound) || (err == nil && cur.State.Terminal())
	}
	if ended {
		cancel(errJobEnded)
	}
	go s.runStarted(ctx, snap, req, release)
}

// onEnd is the store's OnEnd callback, for the end of any job on any
// replica: it remembers the end, stops the job's admission deadline if it
// was admitted here, and cancels its model call if it runs here. It does
// not block: the store calls it from its listener. Once the server is
// drained (or closed) it returns at once: no model call runs here, no
// admission deadline is armed and nothing claims any more, and the ledger
// keeps calling it, having no way to unregister it.
func (s *Server) onEnd(snap ledger.Snapshot) {
	if s.endsOff.Load() {
		return
	}
	s.mu.Lock()
	s.ended[s.ends%endRing] = snap.ID
	s.ends++
	cancel := s.flights[snap.ID]
	t := s.admitTimers[snap.ID]
	delete(s.admitTimers, snap.ID)
	s.mu.Unlock()
	t.halt()
	if cancel != nil {
		cancel(errJobEnded)
	}
}

// endCount is the number of ends onEnd has heard.
func (s *Server) endCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ends
}

// endedSinceLocked reports whether onEnd heard the end of job id after the
// first before ends, and known false when the ring no longer holds all of
// them. s.mu must be held.
func (s *Server) endedSinceLocked(id string, before uint64) (ended, known bool) {
	if s.ends-before > endRing {
		return false, false
	}
	for n := before; n < s.ends; n++ {
		if s.ended[n%endRing] == id {
			return true, true
		}
	}
	return false, true
}

// admitTimer is one job's admission deadline in admitTimers. stop is
// written once, under s.mu, when the timer has been made; nil before.
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
func (s *Server) armAdmission(id string, before uint64) {
	t := &admitTimer{}
	s.mu.Lock()
	ended, known := s.endedSinceLocked(id, before)
	if s.timersStopped || (ended && known) {
		s.mu.Unlock()
		return
	}
	s.admitTimers[id] = t
	s.mu.Unlock()
	stop := s.clock.AfterFunc(s.cfg.AsyncTimeout, func() { s.admissionDeadline(id) })
	s.mu.Lock()
	still := s.admitTimers[id] == t
	if still {
		t.stop = stop
	}
	s.mu.Unlock()
	if !still {
		stop()
	}
}

// admissionDeadline is the admission timer of job id firing: unless the
// timer was stopped meanwhile, it ends the job TIMEOUT, which does nothing
// to a job already terminal. Shutdown waits for it (timerWG).
func (s *Server) admissionDeadline(id string) {
	s.mu.Lock()
	_, armed := s.admitTimers[id]
	delete(s.admitTimers, id)
	armed = armed && !s.timersStopped
	if armed {
		s.timerWG.Add(1)
	}
	s.mu.Unlock()
	if !armed {
		return
	}
	defer s.timerWG.Done()
	s.record(id, ledgertype.TimedOut, nil, wireError(ErrDeadline, ""))
}

// stopAdmissions stops every admission timer left and waits for those that
// fired to record their ends, within Shutdown's hard stop: a TIMEOUT whose
// write hangs past it fails with the store's writes. Shutdown calls it once
// the runners are done or the grace period is over: the jobs still PENDING
// are left for the other replicas or the next process, whose claims end
// them TIMEOUT once past their deadline.
func (s *Server) stopAdmissions(bound *hardStop) {
	s.mu.Lock()
	s.timersStopped = true
	timers := s.admitTimers
	s.admitTimers = map[string]*admitTimer{}
	s.mu.Unlock()
	for _, t := range timers {
		t.halt()
	}
	bound.await("admission timers", waitChan(&s.timerWG))
}

// isClosed reports whether Shutdown has begun.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// sharedOf returns the Shared side of store, or nil for a store of one
// process.
func sharedOf(store ledger.Ledger[Request, json.RawMessage]) ledger.Shared[Request] {
	if sh, ok := ledger.AsShared(store); ok {
		return sh
	}
	return nil
}
