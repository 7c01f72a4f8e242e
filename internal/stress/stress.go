package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/linearizability"
)

// Result is what a stress run of the table recorded and found.
type Result struct {
	Config Config
	Record

	Stats jobtable.Stats // the table at the end
	// StuckWaiters counts waiters still blocked when Grace ran out.
	StuckWaiters int
}

// Run drives a fresh table with the configured workers, records every
// operation, and checks the stress invariants at the end: no call
// panicked, depth back to zero, every accepted job terminated exactly once,
// ids unique, no waiter left blocked, and the table's own invariant
// checker clean. It returns an
// error only for a bad configuration; violations are in the result.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t, err := jobtable.New[string, string](jobtable.Config{
		MaxQueue: cfg.MaxQueue, MaxCompleted: cfg.MaxCompleted, JobTTL: cfg.JobTTL,
	})
	if err != nil {
		return nil, err
	}
	var l Ledger = TableLedger{T: t}
	if cfg.Wrap != nil {
		l = cfg.Wrap(l)
	}
	panics := new(panicLog)
	rec := NewRecorder()
	res := runWorkload(ctx, cfg, rec, guarded{l: l, log: panics})
	res.Stats = t.Stats()
	if v := panics.violation(); v != "" {
		res.Violations = append(res.Violations, v)
	}
	if d := t.Depth(); d != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("depth is %d after every job ended, want 0", d))
	}
	if err := t.CheckInvariants(); err != nil {
		res.Violations = append(res.Violations, "table invariants: "+err.Error())
	}
	return res, nil
}

// runWorkload runs the workers against l and checks what the history alone
// can tell: ids unique, each accepted job terminated exactly once, no
// waiter stuck.
func runWorkload(ctx context.Context, cfg Config, rec *Recorder, l Ledger) *Result {
	w := &workload{
		stressRun: newStressRun(cfg, rec),
		ledger:    l,
		jobs:      make(chan string, 1024),
	}
	runCtx, stopRun := context.WithTimeout(ctx, cfg.Duration)
	defer stopRun()
	waitCtx, stopWaits := context.WithCancel(context.Background())
	defer stopWaits()

	var submitters, runners, readers, waiters sync.WaitGroup
	rng := func(i int) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, uint64(i))) }
	n := 0
	for range cfg.Submitters {
		c, r := rec.Client(l), rng(n)
		n++
		submitters.Go(func() { w.submitter(runCtx, c, r) })
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
	stopProgress := w.reportProgress(runCtx)

	// Submitters stop at the end of the run; runners then finish every job
	// still queued, so every accepted job ends.
	submitters.Wait()
	close(w.jobs)
	runners.Wait()
	readers.Wait()
	stopProgress()

	// Every job has ended, so every waiter must return by itself. Grace is
	// an upper bound that a correct ledger never reaches.
	stuck := 0
	waitersDone := make(chan struct{})
	go func() { waiters.Wait(); close(waitersDone) }()
	grace := time.NewTimer(cfg.Grace)
	select {
	case <-waitersDone:
	case <-grace.C:
		stuck = int(w.inWait.Load())
		stopWaits()
		<-waitersDone
	}
	grace.Stop()

	res := &Result{Config: cfg, Record: w.record(), StuckWaiters: stuck}
	if stuck > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d waiter(s) still blocked %v after every job ended (lost wakeup)", stuck, cfg.Grace))
	}
	res.Violations = append(res.Violations, historyInvariants(res.History)...)
	return res
}

// historyInvariants checks, from the history, that ids are unique and that
// every accepted job had exactly one winning terminal call. A job is
// accepted by the Submit, or the SubmitKeyed that is no replay, that
// returned its id.
func historyInvariants(h []porcupine.Operation) []string {
	var v []string
	accepted := make(map[string]int)
	wins := make(map[string]int)
	for _, op := range h {
		in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
		switch {
		case in.Kind == linearizability.Submit && out.Outcome == linearizability.OK,
			in.Kind == linearizability.SubmitKeyed && out.Outcome == linearizability.OK && !out.Replayed:
			accepted[out.ID]++
		case in.Kind.Terminal() && out.Outcome == linearizability.OK:
			wins[in.ID]++
		}
	}
	dup, none, many := 0, 0, 0
	for id, n := range accepted {
		if n > 1 {
			dup++
		}
		switch w := wins[id]; {
		case w == 0:
			none++
		case w > 1:
			many++
		}
	}
	if dup > 0 {
		v = append(v, fmt.Sprintf("%d job id(s) returned by more than one Submit", dup))
	}
	if none > 0 {
		v = append(v, fmt.Sprintf("%d accepted job(s) never terminated", none))
	}
	if many > 0 {
		v = append(v, fmt.Sprintf("%d job(s) terminated more than once", many))
	}
	return v
}
