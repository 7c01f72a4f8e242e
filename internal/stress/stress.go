package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/jobtable"
)

// Result is what a stress run of one ledger recorded and found.
type Result struct {
	Config Config
	Record

	Stats jobtable.Stats // the table at the end (Run only)
	// StuckWaiters counts waiters still blocked when Grace ran out.
	StuckWaiters int
	// Polls counts the reads that found their job, Waits the Waits that
	// returned it ended.
	Polls, Waits int64
}

// Run drives a fresh table with the configured workers (Drive), and then
// checks that the depth is back to zero and the table's own invariant
// checker is clean. It returns an error only for a bad configuration;
// violations are in the result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	t, err := jobtable.New[string, string](jobtable.Config{
		MaxQueue: cfg.MaxQueue, MaxCompleted: cfg.MaxCompleted, JobTTL: cfg.JobTTL,
	})
	if err != nil {
		return nil, err
	}
	if cfg.Check == nil {
		cfg.Check = t.CheckInvariants
	}
	res, err := Drive(ctx, cfg, TableLedger{T: t})
	if err != nil {
		return nil, err
	}
	res.Stats = t.Stats()
	if d := t.Depth(); d != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("depth is %d after every job ended, want 0", d))
	}
	if err := t.CheckInvariants(); err != nil {
		res.Violations = append(res.Violations, "table invariants: "+err.Error())
	}
	return res, nil
}

// Drive drives l, wrapped by Config.Wrap, with the configured workers,
// records every operation (unless Config.Unrecorded), and checks what
// holds of every correct ledger: while running, each worker's own checks
// (workers.go); at the end, that no call panicked, ids were unique, every
// accepted job ended exactly once, and no waiter was left blocked. The
// ledger's MaxQueue, retention and clock are the caller's, who checks
// the ledger's depth and invariants when Drive returns. It returns an
// error only for a bad configuration; violations are in the result.
func Drive(ctx context.Context, cfg Config, l Ledger) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Wrap != nil {
		l = cfg.Wrap(l)
	}
	panics := new(panicLog)
	rec := NewRecorder()
	rec.discard = cfg.Unrecorded
	res := runWorkload(ctx, cfg, rec, guarded{l: l, log: panics})
	if v := panics.violation(); v != "" {
		res.Violations = append(res.Violations, v)
	}
	return res, nil
}

// runWorkload runs the workers against l and checks what they saw.
func runWorkload(ctx context.Context, cfg Config, rec *Recorder, l Ledger) *Result {
	w := &workload{
		Tally:  NewTally(cfg, rec),
		ledger: l,
		calls:  ctx,
		jobs:   make(chan string, 1024),
		freed:  make(chan struct{}, max(cfg.MaxQueue, 1)),
		enough: make(chan struct{}),
	}
	if cfg.MinAccepted <= 0 {
		close(w.enough)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var clock sync.WaitGroup
	clock.Go(func() { w.runFor(runCtx, stopRun) })
	waitCtx, stopWaits := context.WithCancel(ctx)
	defer stopWaits()

	var submitters, runners, readers, waiters sync.WaitGroup
	rng := func(i int) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, uint64(i))) }
	n := 0
	for i := range cfg.Submitters {
		c, r := rec.Client(l), rng(n)
		n++
		submitters.Go(func() { w.submitter(runCtx, i, c, r) })
	}
	for range cfg.Runners {
		c, r := rec.Client(l), rng(n)
		n++
		runners.Go(func() { w.runner(c, r) })
	}
	for range cfg.Pollers {
		c, r := rec.Client(l), rng(n)
		n++
		readers.Go(func() { w.poller(runCtx, c, r) })
	}
	for range cfg.Waiters {
		c, r := rec.Client(l), rng(n)
		n++
		waiters.Go(func() { w.waiter(runCtx, waitCtx, c, r) })
	}
	stopProgress := w.ReportProgress(runCtx)

	// Submitters stop at the end of the run; runners then finish every job
	// still queued, so every accepted job ends.
	submitters.Wait()
	stopRun()
	clock.Wait()
	close(w.jobs)
	runners.Wait()
	readers.Wait()
	stopProgress()

	stuck, lost := w.awaitWaiters(&waiters, stopWaits)
	res := &Result{Config: cfg, Record: w.Record(), StuckWaiters: stuck, Polls: w.polls.Load(), Waits: w.waits.Load()}
	res.Violations = append(res.Violations, w.list()...)
	if lost != "" {
		res.Violations = append(res.Violations, lost)
	}
	res.Violations = append(res.Violations, w.endedOnce()...)
	return res
}

// runFor stops the run (stop) once Duration has passed and MinAccepted jobs
// were accepted, or once MaxDuration has passed, whichever comes first;
// or when ctx ends.
func (w *workload) runFor(ctx context.Context, stop func()) {
	defer stop()
	minTime := time.NewTimer(w.cfg.Duration)
	defer minTime.Stop()
	select {
	case <-minTime.C:
	case <-ctx.Done():
		return
	}
	var hardCap <-chan time.Time
	if w.cfg.MaxDuration > w.cfg.Duration {
		t := time.NewTimer(w.cfg.MaxDuration - w.cfg.Duration)
		defer t.Stop()
		hardCap = t.C
	}
	select {
	case <-w.enough:
	case <-hardCap:
	case <-ctx.Done():
	}
}

// awaitWaiters waits for the waiters, once every job has ended: each must
// return by itself. Grace is an upper bound that a correct ledger never
// reaches; Config.Check, called meanwhile, may show a lost wakeup sooner.
// It returns the waiters still blocked when it gave up, and why.
func (w *workload) awaitWaiters(waiters *sync.WaitGroup, stopWaits func()) (int, string) {
	done := make(chan struct{})
	go func() { waiters.Wait(); close(done) }()
	grace := time.NewTimer(w.cfg.Grace)
	defer grace.Stop()
	var tick <-chan time.Time
	if w.cfg.Check != nil {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		var why string
		select {
		case <-done:
			return 0, ""
		case <-grace.C:
			why = fmt.Sprintf("still blocked %v after every job ended (lost wakeup)", w.cfg.Grace)
		case <-tick:
			err := w.cfg.Check()
			if err == nil {
				continue
			}
			why = fmt.Sprintf("blocked on an ended job (lost wakeup): %v", err)
		}
		stuck := int(w.inWait.Load())
		stopWaits()
		<-done
		return stuck, fmt.Sprintf("%d waiter(s) %s", stuck, why)
	}
}

// endedOnce checks that every accepted job was ended by exactly one call.
func (w *workload) endedOnce() []string {
	var v []string
	none, many := 0, 0
	w.wins.Range(func(_, n any) bool {
		switch n := n.(*atomic.Int32).Load(); {
		case n == 0:
			none++
		case n > 1:
			many++
		}
		return true
	})
	if none > 0 {
		v = append(v, fmt.Sprintf("%d accepted job(s) never terminated", none))
	}
	if many > 0 {
		v = append(v, fmt.Sprintf("%d job(s) terminated more than once", many))
	}
	return v
}
