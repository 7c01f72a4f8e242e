package linearizability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/jobledger/jobledger/internal/invariant"
	"github.com/jobledger/jobledger/jobtable"
)

// StressConfig shapes a stress run. DefaultStressConfig gives the seed's
// shape: 4 submitters, 2 runners, 3 pollers and 2 waiters for about 3 s,
// against a queue small enough that admission is contested and retention
// small enough that eviction happens during the run.
type StressConfig struct {
	Submitters, Runners, Pollers, Waiters int

	// Duration bounds the run; MaxOps bounds the history (the run stops
	// early when it holds this many operations). Both are required.
	Duration time.Duration
	MaxOps   int

	// The table's configuration (jobtable.Config).
	MaxQueue     int
	MaxCompleted int
	JobTTL       time.Duration

	// WaitTimeout is the deadline of a waiter's bounded Wait. Every other
	// Wait has no deadline of its own and must return when its job ends.
	WaitTimeout time.Duration
	// Grace bounds how long the end of the run waits for waiters once every
	// job has ended. A correct ledger never uses it up: a waiter still
	// blocked then has lost its wakeup.
	Grace time.Duration

	// Seed seeds each worker's random choices.
	Seed uint64

	// Wrap, if not nil, wraps the ledger the workers drive: a test injects
	// a fault through it to show that the checks catch it.
	Wrap func(Ledger) Ledger

	// Progress, if not nil, is called about every ProgressEvery while the
	// run is under way.
	Progress      func(Progress)
	ProgressEvery time.Duration

	_ struct{}
}

// Progress is a progress report of a running stress.
type Progress struct {
	Elapsed            time.Duration
	Ops                int
	Accepted, Rejected int64
}

// DefaultStressConfig returns the seed's shape.
func DefaultStressConfig() StressConfig {
	return StressConfig{
		Submitters: 4, Runners: 2, Pollers: 3, Waiters: 2,
		Duration: 3 * time.Second, MaxOps: 400_000,
		MaxQueue: 4, MaxCompleted: 16, JobTTL: time.Millisecond,
		WaitTimeout: 2 * time.Millisecond, Grace: 5 * time.Second,
		Seed: 1, ProgressEvery: 500 * time.Millisecond,
	}
}

func (c StressConfig) validate() error {
	switch {
	case c.Submitters < 1 || c.Runners < 1 || c.Pollers < 0 || c.Waiters < 0:
		return errors.New("stress: need at least one submitter and one runner")
	case c.Duration <= 0 || c.MaxOps <= 0:
		return errors.New("stress: Duration and MaxOps must be positive")
	case c.WaitTimeout <= 0 || c.Grace <= 0:
		return errors.New("stress: WaitTimeout and Grace must be positive")
	}
	return nil
}

// StressResult is what a stress run recorded and found.
type StressResult struct {
	Config  StressConfig
	History []porcupine.Operation
	Elapsed time.Duration

	Accepted, Rejected int64
	Stats              jobtable.Stats // the table at the end
	// StuckWaiters counts waiters still blocked when Grace ran out.
	StuckWaiters int
	// Violations lists the stress invariants that failed at the end.
	Violations []string
}

// RunStress drives a fresh table with the configured workers, records
// every operation, and checks the stress invariants at the end: depth back
// to zero, every accepted job terminated exactly once, ids unique, no
// waiter left blocked, and the table's own invariant checker clean. It
// returns an error only for a bad configuration; violations are in the
// result.
func RunStress(ctx context.Context, cfg StressConfig) (*StressResult, error) {
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
	rec := NewRecorder()
	res := runWorkload(ctx, cfg, rec, l)
	res.Stats = t.Stats()
	if d := t.Depth(); d != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("depth is %d after every job ended, want 0", d))
	}
	if err := invariant.Check(t); err != nil {
		res.Violations = append(res.Violations, "table invariants: "+err.Error())
	}
	return res, nil
}

// runWorkload runs the workers against l and checks what the history alone
// can tell: ids unique, each accepted job terminated exactly once, no
// waiter stuck.
func runWorkload(ctx context.Context, cfg StressConfig, rec *Recorder, l Ledger) *StressResult {
	w := &workload{
		cfg:  cfg,
		rec:  rec,
		jobs: make(chan string, 1024),
	}
	start := time.Now()
	runCtx, stopRun := context.WithTimeout(ctx, cfg.Duration)
	defer stopRun()
	waitCtx, stopWaits := context.WithCancel(context.Background())
	defer stopWaits()

	var submitters, runners, readers, waiters sync.WaitGroup
	rng := func(i int) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, uint64(i))) }
	n := 0
	for range cfg.Submitters {
		c := rec.Client(l)
		n++
		submitters.Go(func() { w.submitter(runCtx, c) })
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
	progressDone := make(chan struct{})
	var progress sync.WaitGroup
	if cfg.Progress != nil && cfg.ProgressEvery > 0 {
		progress.Go(func() { w.report(runCtx, progressDone, start) })
	}

	// Submitters stop at the end of the run; runners then finish every job
	// still queued, so every accepted job ends.
	submitters.Wait()
	close(w.jobs)
	runners.Wait()
	readers.Wait()
	close(progressDone)
	progress.Wait()

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

	res := &StressResult{
		Config:       cfg,
		History:      rec.History(),
		Elapsed:      time.Since(start),
		Accepted:     w.accepted.Load(),
		Rejected:     w.rejected.Load(),
		StuckWaiters: stuck,
	}
	if stuck > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d waiter(s) still blocked %v after every job ended (lost wakeup)", stuck, cfg.Grace))
	}
	res.Violations = append(res.Violations, historyInvariants(res.History)...)
	return res
}

// historyInvariants checks, from the history, that ids are unique and that
// every accepted job had exactly one winning terminal call.
func historyInvariants(h []porcupine.Operation) []string {
	var v []string
	accepted := make(map[string]int)
	wins := make(map[string]int)
	for _, op := range h {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Kind == Submit && out.Outcome == OK:
			accepted[out.ID]++
		case in.Kind.Terminal() && out.Outcome == OK:
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

// workload is the shared state of one stress run's workers.
type workload struct {
	cfg  StressConfig
	rec  *Recorder
	jobs chan string // accepted ids, for the runners

	accepted, rejected atomic.Int64
	inWait             atomic.Int64 // waiters inside an unbounded Wait

	recentIDs // the accepted ids
}

// more reports whether the run goes on: its time and its operation budget
// are both left.
func (w *workload) more(ctx context.Context) bool {
	return ctx.Err() == nil && w.rec.Len() < w.cfg.MaxOps
}

func (w *workload) submitter(ctx context.Context, c *Client) {
	bg := context.Background()
	for n := 0; w.more(ctx); n++ {
		id, err := c.Submit(bg, fmt.Sprintf("task-%d-%d", c.ID(), n), fmt.Sprintf("req-%d-%d", c.ID(), n))
		if err != nil {
			w.rejected.Add(1)
			runtime.Gosched()
			continue
		}
		w.accepted.Add(1)
		w.remember(id)
		w.jobs <- id
	}
}

// runner plays the worker pool: it takes each accepted job's request,
// starts it and ends it, and now and then repeats a call that must fail
// (a second TakeRequest, a second terminal call, a Start after the end). It
// runs until the queue of accepted jobs is closed and drained.
func (w *workload) runner(c *Client, r *rand.Rand) {
	bg := context.Background()
	for id := range w.jobs {
		c.TakeRequest(bg, id)
		if r.IntN(4) == 0 {
			c.TakeRequest(bg, id)
		}
		c.Start(bg, id)
		runtime.Gosched() // let readers see RUNNING
		switch k := r.IntN(10); {
		case k < 7:
			c.Finish(bg, id, "res-"+id)
		case k < 9:
			c.Fail(bg, id, "failed-"+id)
		default:
			c.Timeout(bg, id, "deadline-"+id)
		}
		if r.IntN(4) == 0 {
			c.Timeout(bg, id, "late-"+id)
		}
		if r.IntN(8) == 0 {
			c.Start(bg, id)
		}
	}
}

// poller reads recent jobs, and now and then cancels one (a Timeout that
// races the runners' terminal calls).
func (w *workload) poller(ctx context.Context, c *Client, r *rand.Rand) {
	bg := context.Background()
	for w.more(ctx) {
		id := w.pick(r, false)
		if id == "" {
			runtime.Gosched()
			continue
		}
		switch k := r.IntN(20); {
		case k < 10:
			c.Snapshot(bg, id)
		case k < 19:
			c.Result(bg, id)
		default:
			c.Timeout(bg, id, "cancelled-"+id)
		}
		runtime.Gosched() // leave the cores to submitters and runners
	}
}

// waiter waits on the newest job, alternately with a short deadline of its
// own and with none (stopped only by waitCtx, which ends when Grace runs
// out at the end of the run).
func (w *workload) waiter(ctx, waitCtx context.Context, c *Client, r *rand.Rand) {
	for n := 0; w.more(ctx); n++ {
		id := w.pick(r, r.IntN(4) != 0)
		if id == "" {
			runtime.Gosched()
			continue
		}
		if n%2 == 0 {
			w.inWait.Add(1)
			c.Wait(waitCtx, id)
			w.inWait.Add(-1)
			continue
		}
		wctx, cancel := context.WithTimeout(waitCtx, w.cfg.WaitTimeout)
		c.Wait(wctx, id)
		cancel()
		runtime.Gosched()
	}
}

func (w *workload) report(ctx context.Context, done <-chan struct{}, start time.Time) {
	tick := time.NewTicker(w.cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if ctx.Err() != nil {
				continue // the run is winding down; wait for done
			}
			w.cfg.Progress(Progress{
				Elapsed:  time.Since(start).Round(time.Millisecond),
				Ops:      w.rec.Len(),
				Accepted: w.accepted.Load(),
				Rejected: w.rejected.Load(),
			})
		}
	}
}
