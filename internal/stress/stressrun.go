package stress

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/linearizability"
)

// What every stress driver shares: this package's, which drives a table or
// a store in process (stress.go, its workers in workers.go), and those of
// package httpstress, which drive servers through their HTTP API. Their
// configuration, its validation, the common part of their results, and
// the run's bookkeeping (Tally) live here; each driver keeps only its
// workers and its end-of-run checks.

// Config shapes a stress run. DefaultConfig gives the default shape: 4
// submitters, 2 runners, 3 pollers and 2 waiters for about 3 s, against a
// queue small enough that admission is contested and retention small
// enough that eviction happens during the run.
type Config struct {
	Submitters, Runners, Pollers, Waiters int

	// Duration bounds the run; MaxOps bounds the history (the run stops
	// early when it holds this many operations). Both are required.
	Duration time.Duration
	MaxOps   int
	// MinAccepted, if positive, makes a stress of one ledger (Run, Drive)
	// go on past Duration until this many jobs were accepted, so that a
	// slow machine still contests admission and evicts, but never past
	// MaxDuration (if it is longer than Duration).
	MinAccepted int
	MaxDuration time.Duration

	// The ledger's configuration (ledger.Config): Run's table's; the
	// caller of Drive opens its ledger with them.
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

	// One submit in KeyedEvery is keyed (zero: none is): SubmitKeyed at
	// the table level, a POST /jobs with an Idempotency-Key at the HTTP
	// levels, under one of Keys keys at a time (keyed.go): the run's keyed
	// submits take the keys in turn, a few submits each, so that a fresh
	// key meets several submitters at once and a key comes back (replayed
	// while its job is retained, a new job once retention freed it) a few
	// times before fresh keys replace them. One keyed submit in 8 sends
	// another request than its key's, which a retained job of the key
	// refuses (ErrKeyConflict, 422).
	KeyedEvery int
	Keys       int

	// Seed seeds each worker's random choices.
	Seed uint64

	// The shape of a stress of one ledger (Run, Drive). One poll in
	// CancelEvery cancels its job, racing the runners (zero: none does,
	// and then every call a runner makes on its job must succeed). With
	// WaitForSlot, a submitter refused at the bound waits until a runner
	// ends a job, so that the submitters race for the freed slot. Tick, if
	// not nil, is called by the first submitter before every other submit
	// (a fake clock's advance, so that retention by time runs).
	CancelEvery int
	WaitForSlot bool
	Tick        func()
	// Check, if not nil, is the ledger's invariant checker: Drive calls it
	// about every millisecond while it waits for the waiters at the end,
	// when only they may be running, so that a waiter blocked on an ended
	// job fails the run at once rather than when Grace runs out.
	Check func() error
	// Unrecorded keeps no history: a stress of one ledger checks what its
	// workers see, and MaxOps still bounds its operations.
	Unrecorded bool

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

// DefaultConfig returns the default shape, described on Config.
func DefaultConfig() Config {
	return Config{
		Submitters: 4, Runners: 2, Pollers: 3, Waiters: 2,
		Duration: 3 * time.Second, MaxOps: 400_000,
		MaxQueue: 4, MaxCompleted: 16, JobTTL: time.Millisecond,
		WaitTimeout: 2 * time.Millisecond, Grace: 5 * time.Second,
		KeyedEvery: 4, Keys: 16, CancelEvery: 20,
		Seed: 1, ProgressEvery: 500 * time.Millisecond,
	}
}

// LedgerConfig returns the shape of the stress of one ledger that the
// conformance suite and the table's own tests run, unrecorded: 4
// submitters, 2 runners, 3 pollers and 2 waiters against MaxQueue 6, with
// retention small enough (JobTTL 50 ms, MaxCompleted 64) that eviction runs
// all along, submitters that wait for a freed slot, and no cancels, so
// that every runner's call must succeed. The caller sets Duration,
// MinAccepted, MaxDuration, Tick and Check.
func LedgerConfig() Config {
	return Config{
		Submitters: 4, Runners: 2, Pollers: 3, Waiters: 2,
		MaxOps:   10_000_000,
		MaxQueue: 6, MaxCompleted: 64, JobTTL: 50 * time.Millisecond,
		WaitTimeout: 2 * time.Millisecond, Grace: 10 * time.Second,
		WaitForSlot: true, Unrecorded: true, Seed: 1,
	}
}

// Validate reports a configuration that no stress run can take.
func (c Config) Validate() error {
	switch {
	case c.Submitters < 1 || c.Runners < 1 || c.Pollers < 0 || c.Waiters < 0:
		return errors.New("stress: need at least one submitter and one runner")
	case c.Duration <= 0 || c.MaxOps <= 0:
		return errors.New("stress: Duration and MaxOps must be positive")
	case c.WaitTimeout <= 0 || c.Grace <= 0:
		return errors.New("stress: WaitTimeout and Grace must be positive")
	case c.CancelEvery < 0 || c.MinAccepted < 0:
		return errors.New("stress: CancelEvery and MinAccepted must be at least 0")
	case c.KeyedEvery < 0 || c.KeyedEvery > 0 && c.Keys < 1:
		return errors.New("stress: KeyedEvery must be at least 0, and keyed submits need at least one key")
	}
	return nil
}

// Record is what every stress run recorded and found, whatever it drove.
// Result and HTTPResult embed it.
type Record struct {
	History []porcupine.Operation
	// Walks are the walks of the listing that reached their last page (the
	// HTTP levels' pollers walk GET /jobs now and then), to be checked
	// beside History (linearizability.CheckRecordedWalks).
	Walks   []linearizability.Walk
	Elapsed time.Duration

	Accepted, Rejected int64
	// Replays and Conflicts count the keyed submits that replayed their
	// key's job (over HTTP: answered 202 with a job an earlier keyed 202
	// named), and that were refused for another request (422). Accepted
	// counts a job a keyed submit created once, Rejected the keyed
	// submits refused at the bound.
	Replays, Conflicts int64
	// Violations lists the end-of-run checks that failed.
	Violations []string
}

// Tally is the bookkeeping of one run that every driver keeps: the
// recorder, the run's bounds, the admissions and rejections its submitters
// saw, the ids they were given, and its keyed submits. Safe for concurrent
// use.
type Tally struct {
	cfg   Config // set once, as rec and start
	rec   *Recorder
	start time.Time

	accepted, rejected atomic.Int64

	recentIDs          // the admitted ids
	keyed     keyedRun // the run's keyed submits
}

// NewTally returns the bookkeeping of a run of cfg recorded by rec, which
// starts now.
func NewTally(cfg Config, rec *Recorder) *Tally {
	return &Tally{cfg: cfg, rec: rec, start: time.Now()}
}

// Recorder returns the run's recorder.
func (r *Tally) Recorder() *Recorder { return r.rec }

// More reports whether the run goes on: its time (ctx) and its operation
// budget (Config.MaxOps) are both left.
func (r *Tally) More(ctx context.Context) bool {
	return ctx.Err() == nil && r.rec.Len() < r.cfg.MaxOps
}

// Accept counts a job admitted and remembers its id; it returns the jobs
// admitted so far.
func (r *Tally) Accept(id string) int64 {
	n := r.accepted.Add(1)
	r.remember(id)
	return n
}

// Reject counts a submit refused at the bound.
func (r *Tally) Reject() { r.rejected.Add(1) }

// Pick returns a recently admitted id, the newest when newest is set; ""
// if none yet.
func (r *Tally) Pick(rng *rand.Rand, newest bool) string { return r.pick(rng, newest) }

// IDs returns every id admitted so far, in admission order.
func (r *Tally) IDs() []string { return r.ids() }

// NextKey returns the run's next keyed submit, under one of Config.Keys
// keys.
func (r *Tally) NextKey(rng *rand.Rand) KeyTurn { return r.keyed.next(r.cfg.Keys, rng) }

// Replayed counts a keyed submit that replayed its key's job; Conflicted
// one refused for another request than its key's.
func (r *Tally) Replayed()   { r.keyed.replays.Add(1) }
func (r *Tally) Conflicted() { r.keyed.conflicts.Add(1) }

// ReportProgress calls Config.Progress about every ProgressEvery, if both
// are set, while ctx (the run) lasts. The returned stop ends the reports
// and waits for the last one.
func (r *Tally) ReportProgress(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	if r.cfg.Progress != nil && r.cfg.ProgressEvery > 0 {
		wg.Go(func() { r.report(ctx, done) })
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

func (r *Tally) report(ctx context.Context, done <-chan struct{}) {
	tick := time.NewTicker(r.cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if ctx.Err() != nil {
				continue // the run is winding down; wait for done
			}
			r.cfg.Progress(Progress{
				Elapsed:  time.Since(r.start).Round(time.Millisecond),
				Ops:      r.rec.Len(),
				Accepted: r.accepted.Load(),
				Rejected: r.rejected.Load(),
			})
		}
	}
}

// Record returns what the run recorded so far: the history, the walks,
// the time since it started, and the counts.
func (r *Tally) Record() Record {
	return Record{
		History: r.rec.History(),
		Walks:   r.rec.Walks(),
		// A walk that never ends is a listing violation.
		Violations: r.rec.WalkViolations(),
		Elapsed:    time.Since(r.start),
		Accepted:   r.accepted.Load(),
		Rejected:   r.rejected.Load(),
		Replays:    r.keyed.replays.Load(),
		Conflicts:  r.keyed.conflicts.Load(),
	}
}
