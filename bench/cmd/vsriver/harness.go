package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// side is one job system under test. Each method runs one workload on the
// run's database, calls r.start once its setup is done and r.stop once
// the measured phase is over, and returns after every goroutine it
// started has ended and every store or client it opened is closed.
type side interface {
	name() string
	insertOnly(ctx context.Context, r *run) error
	// drain inserts a backlog of r.set.jobs, then drains it with
	// replicas stores or clients on the one database.
	drain(ctx context.Context, r *run, replicas int) error
	insertThenDrain(ctx context.Context, r *run) error
	latency(ctx context.Context, r *run) error
}

// workload is one of the workloads, and how a side runs it.
type workload struct {
	name string
	run  func(ctx context.Context, s side, r *run) error
}

// workloads are the workloads in the order they run.
var workloads = []workload{
	{"insert-only", func(ctx context.Context, s side, r *run) error { return s.insertOnly(ctx, r) }},
	{"drain", func(ctx context.Context, s side, r *run) error { return s.drain(ctx, r, 1) }},
	{"insert-then-drain", func(ctx context.Context, s side, r *run) error { return s.insertThenDrain(ctx, r) }},
	{"replicas", func(ctx context.Context, s side, r *run) error { return s.drain(ctx, r, r.set.replicas) }},
	{"latency", func(ctx context.Context, s side, r *run) error { return s.latency(ctx, r) }},
}

// workloadNames lists the workloads' names in order.
func workloadNames() []string {
	var names []string
	for _, w := range workloads {
		names = append(names, w.name)
	}
	return names
}

// choose returns the workloads named in list (comma-separated), in their
// order of running.
func choose(list string) ([]workload, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var chosen []workload
	for _, w := range workloads {
		if want[w.name] {
			chosen = append(chosen, w)
			delete(want, w.name)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("no workload %q (have %s)", n, strings.Join(workloadNames(), ", "))
	}
	if len(chosen) == 0 {
		return nil, errors.New("no workload chosen")
	}
	return chosen, nil
}

// run is one run of one side on a database of its own: its settings, its
// clock and the server's counters around its measured phase.
type run struct {
	set   settings
	dsn   string // the run's database
	db    string
	admin *admin

	started, stopped bool
	t0, t1           time.Time
	before           counters
	jobs             int             // jobs of the measured phase
	lat              []time.Duration // latency workload: one a job
}

// start lets the counters settle after the setup, reads them, and starts
// the clock.
func (r *run) start(ctx context.Context) error {
	if err := sleep(ctx, settle); err != nil {
		return err
	}
	c, err := r.admin.read(ctx, r.db)
	if err != nil {
		return fmt.Errorf("reading the counters: %w", err)
	}
	r.before, r.started, r.t0 = c, true, time.Now()
	return nil
}

// stop stops the clock on a measured phase of jobs jobs.
func (r *run) stop(jobs int) {
	r.t1, r.jobs, r.stopped = time.Now(), jobs, true
}

// result is what one run measured.
type result struct {
	jobs     int
	elapsed  time.Duration
	walSyncs int64
	walBytes int64
	walFPIs  int64
	commits  int64
	xids     int64
	lat      []time.Duration
}

// rate is the run's jobs a second.
func (r result) rate() float64 { return float64(r.jobs) / r.elapsed.Seconds() }

// outcome is a workload's results, by side (ours, River) and rep; a failed
// run leaves its result nil and its error in errs.
type outcome struct {
	w    workload
	runs [2][]*result
	errs []error
}

func (o outcome) failed() bool { return len(o.errs) > 0 }

// harness runs the workloads on one server.
type harness struct {
	set   settings
	admin *admin
	sides [2]side // ours, River
	log   io.Writer
}

// newHarness connects to the server named by dsn.
func newHarness(ctx context.Context, dsn string, set settings) (*harness, error) {
	a, err := openAdmin(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", dsn, err)
	}
	return &harness{set: set, admin: a, sides: [2]side{ours{}, riverSide{}}, log: os.Stderr}, nil
}

func (h *harness) close() { h.admin.close() }

// workload runs w reps times on each side, the first side alternating.
func (h *harness) workload(ctx context.Context, w workload) outcome {
	o := outcome{w: w}
	for rep := range h.set.reps {
		order := []int{0, 1}
		if rep%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if ctx.Err() != nil {
				o.errs = append(o.errs, ctx.Err())
				return o
			}
			res, err := h.once(ctx, w, h.sides[i], rep)
			for len(o.runs[i]) <= rep {
				o.runs[i] = append(o.runs[i], nil)
			}
			if err != nil {
				err = fmt.Errorf("%s, %s, rep %d: %w", w.name, h.sides[i].name(), rep+1, err)
				fmt.Fprintln(h.log, "vsriver: FAILED:", err)
				o.errs = append(o.errs, err)
				continue
			}
			o.runs[i][rep] = res
			fmt.Fprintf(h.log, "vsriver: %s, %s, rep %d: %s\n", w.name, h.sides[i].name(), rep+1, res.summary(w))
		}
	}
	return o
}

// once runs w on side s on a database created for it, dropped after.
func (h *harness) once(ctx context.Context, w workload, s side, rep int) (*result, error) {
	db := fmt.Sprintf("vsriver_%s_%s_%d", s.name(), strings.ReplaceAll(w.name, "-", "_"), rep+1)
	dsn, err := h.admin.create(ctx, db)
	if err != nil {
		return nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := h.admin.drop(dctx, db); err != nil {
			fmt.Fprintln(h.log, "vsriver:", err)
		}
	}()
	r := &run{set: h.set, dsn: dsn, db: db, admin: h.admin}
	rctx, cancel := context.WithTimeout(ctx, h.set.timeout)
	defer cancel()
	err = w.run(rctx, s, r)
	if err == nil && !r.stopped {
		err = errors.New("the run ended without its measured phase")
	}
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, fmt.Errorf("timed out after %s (a failure, not a figure): %w", h.set.timeout, err)
	}
	if err != nil {
		return nil, err
	}
	// Everything the run opened is closed: its sessions have reported.
	if err := sleep(ctx, settle); err != nil {
		return nil, err
	}
	after, err := h.admin.read(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("reading the counters: %w", err)
	}
	return &result{
		jobs:     r.jobs,
		elapsed:  r.t1.Sub(r.t0),
		walSyncs: after.walSyncs - r.before.walSyncs,
		walBytes: after.walBytes - r.before.walBytes,
		walFPIs:  after.walFPIs - r.before.walFPIs,
		commits:  after.commits - r.before.commits,
		xids:     after.xids - r.before.xids,
		lat:      r.lat,
	}, nil
}

// header prints the server and the settings.
func (h *harness) header(w io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, err := h.admin.server(ctx)
	if err != nil {
		line = "server settings unknown: " + err.Error()
	}
	s := h.set
	fmt.Fprintf(w, "%s\n", line)
	fmt.Fprintf(w, "both sides: %d workers, %d inserting goroutines, a pool of %d connections, payload {}, %d jobs a workload, %d reps (order alternating), a fresh database a run\n",
		s.workers, s.inserters, s.conns, s.jobs, s.reps)
	fmt.Fprintf(w, "ours: store/postgres, workers claiming the next job while the last one's Finish commits, waking on Work() or after 1 s; its listener is outside the pool\n")
	fmt.Fprintf(w, "River v0.51.2 (riverpgxv5): FetchCooldown 1ms for the throughput workloads, its defaults (100ms cooldown, 1s poll) for latency; its listener holds one of the pool's connections\n")
	fmt.Fprintf(w, "latency: %d jobs/s for %s, insert -> completion seen by the inserting side; replicas: %d stores or clients on one database\n\n",
		s.rate, s.duration, s.replicas)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
