package stress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/store/postgres"
)

// ReplicasConfig shapes a multi-replica test: Replicas jobserver processes
// on one shared store (a PostgreSQL database), each under the HTTP
// stress's clients, one of them killed with SIGKILL KillAt into the run and
// started again, under the same replica name, DownFor later.
//
// As in the crash test, retention evicts nothing (JobTTL an hour,
// MaxCompleted above any run), so every job a 202 named must be readable
// from every replica until the end; the history is checked with
// linearizability.CheckConfig.Retained.
type ReplicasConfig struct {
	// HTTPConfig gives each replica's clients (Submitters, Pollers and
	// Waiters of them per replica), each server's workers (Runners), the
	// echo jobs and the queue bound, which all replicas share. Duration
	// is the length of the load, kill and restart included.
	HTTPConfig

	// Server is the path of the jobserver binary; Store its -store value,
	// the same for every replica; Dir holds a directory per replica with
	// its address file and the log of each of its lives.
	Server, Store, Dir string
	// Replicas is the number of servers, named r1, r2, ...
	Replicas int
	// Lease is each server's -lease: a job that was running on the killed
	// replica ends FAILED "worker lost" once its lease lapses, unless the
	// replica's restart ends it first ("interrupted by restart").
	Lease time.Duration
	// KillAt is when, from the start of the load, one replica (drawn from
	// the seed) is killed; DownFor how long it stays down.
	KillAt, DownFor time.Duration
	// StartTimeout bounds a start, from exec to listening.
	StartTimeout time.Duration

	_ struct{}
}

// DefaultReplicasConfig returns 3 replicas under 3 s of load, one killed
// 1 s in and started again 500 ms later, with leases of 500 ms; per
// replica 2 submitters, 2 pollers and 1 waiter, 2 workers; echo jobs of up
// to 20 ms, a queue of 8 shared by all, a job deadline of 2 s. Server,
// Store and Dir are left to the caller.
func DefaultReplicasConfig() ReplicasConfig {
	h := DefaultCrashConfig().HTTPConfig
	h.Duration = 3 * time.Second
	return ReplicasConfig{
		HTTPConfig: h,
		Replicas:   3, Lease: 500 * time.Millisecond,
		KillAt: time.Second, DownFor: 500 * time.Millisecond,
		StartTimeout: 20 * time.Second,
	}
}

func (c ReplicasConfig) validate() error {
	if err := c.HTTPConfig.validate(); err != nil {
		return err
	}
	switch {
	case c.Server == "" || c.Store == "" || c.Dir == "":
		return errors.New("stress: a replicas test needs Server, Store and Dir")
	case c.Replicas < 2:
		return errors.New("stress: a replicas test needs at least 2 replicas, one to kill and one to carry on")
	case c.Lease <= 0 || c.KillAt <= 0 || c.DownFor <= 0 || c.KillAt+c.DownFor >= c.Duration || c.StartTimeout <= 0:
		return errors.New("stress: Lease, KillAt, DownFor or StartTimeout out of range (the restart must come before the end of Duration)")
	}
	return nil
}

// ReplicasResult is what a multi-replica test recorded and found.
type ReplicasResult struct {
	Config ReplicasConfig
	Record
	// Victim is the replica killed and restarted; Lives counts the server
	// processes started; Lost counts the operations recorded pending
	// forever (in flight at the kill, mostly).
	Victim string
	Lives  int
	Lost   int64
	// Checked counts the reads of acknowledged jobs through the restarted
	// replica, right after its restart.
	Checked int
	// Reaped and Interrupted count the jobs seen ended FAILED by the death
	// of the killed replica: "worker lost" (a reaper, once the lease
	// lapsed) and "interrupted by restart" (the replica's own restart).
	// Nobody observed those transitions happen; the history only shows
	// their outcome.
	Reaped, Interrupted int
}

// replica is one server of the test and the clients that drive it.
type replica struct {
	name, dir string
	life      int
	srv       *server
	w         *httpWorkload
	stopLoad  context.CancelFunc
	clients   sync.WaitGroup
}

// RunReplicas runs the multi-replica test: it starts the replicas, puts
// the load on each, kills one at KillAt while its requests are in flight,
// starts it again DownFor later and first reads through it every job
// acknowledged so far (each must exist, and each seen terminal must show
// the same end), then loads it again until Duration. Then it drains through
// all replicas: every acknowledged job must end within the job deadline
// plus the lease plus Grace, and the shared queue depth must come back to
// zero; every replica must stop cleanly on SIGTERM. The history is for
// linearizability.CheckHTTP with Retained set. It returns an error only
// for a bad configuration or a server that cannot start.
func RunReplicas(ctx context.Context, cfg ReplicasConfig) (*ReplicasResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	run := newStressRun(cfg.Config, NewRecorder())
	res := &ReplicasResult{Config: cfg}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	defer tr.CloseIdleConnections()
	reps := make([]*replica, cfg.Replicas)
	defer func() { // on an early return, nothing is left running
		for _, r := range reps {
			if r != nil && r.srv != nil {
				r.stopClients()
				r.srv.kill()
			}
		}
	}()
	for i := range reps {
		reps[i] = &replica{name: "r" + strconv.Itoa(i+1), dir: filepath.Join(cfg.Dir, "r"+strconv.Itoa(i+1))}
		if err := reps[i].start(cfg, run, tr); err != nil {
			return nil, err
		}
		res.Lives++
	}
	loadCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	for i, r := range reps {
		r.load(loadCtx, i)
	}
	stopProgress := run.reportProgress(loadCtx)
	victim := reps[rand.New(rand.NewPCG(cfg.Seed, 1)).IntN(len(reps))]
	res.Victim = victim.name
	if sleepCtx(loadCtx, cfg.KillAt) {
		victim.srv.kill() // first, so that requests are in flight when it dies
		victim.stopClients()
		victim.srv = nil
		res.Lost += victim.w.lost.Load()
		tr.CloseIdleConnections()
	}
	if victim.srv == nil && sleepCtx(loadCtx, cfg.DownFor) {
		victim.life++
		if err := victim.start(cfg, run, tr); err != nil {
			return nil, err
		}
		res.Lives++
		res.Checked += victim.w.checkSurvivors(victim.life, &res.Record)
		victim.load(loadCtx, len(reps))
	}
	<-loadCtx.Done()
	for _, r := range reps {
		r.stopClients()
	}
	stopProgress()
	if ctx.Err() != nil {
		res.Violations = append(res.Violations, "interrupted: "+ctx.Err().Error())
	}
	drainReplicas(ctx, reps, cfg, res)
	var stops sync.WaitGroup
	stopErrs := make([]error, len(reps))
	for i, r := range reps {
		if r.srv == nil {
			continue
		}
		res.Lost += r.w.lost.Load()
		stops.Go(func() { stopErrs[i] = r.srv.stop(ctx, 10*time.Second) })
	}
	stops.Wait()
	for i, r := range reps {
		if stopErrs[i] != nil {
			res.Violations = append(res.Violations, r.name+": "+stopErrs[i].Error())
		}
		r.srv = nil
	}
	rec := run.record()
	res.Record.History, res.Elapsed = rec.History, rec.Elapsed
	res.Accepted, res.Rejected = rec.Accepted, rec.Rejected
	for _, e := range endsSeen(res.History) {
		switch {
		case !e.errKnown:
		case e.err == postgres.WorkerLost:
			res.Reaped++
		case e.err == postgres.InterruptedByRestart:
			res.Interrupted++
		}
	}
	return res, nil
}

// start starts a life of the replica's server and a workload on it.
func (r *replica) start(cfg ReplicasConfig, run *stressRun, tr *http.Transport) error {
	args := []string{
		"-store", cfg.Store, "-model", "echo", "-replica", r.name,
		"-lease", strconv.FormatInt(cfg.Lease.Milliseconds(), 10),
		"-workers", strconv.Itoa(max(cfg.Runners, 1)),
		"-async-max-queue", strconv.Itoa(cfg.MaxQueue),
		"-async-timeout", strconv.FormatInt(cfg.JobTimeout.Milliseconds(), 10),
		"-async-job-ttl", strconv.FormatInt(time.Hour.Milliseconds(), 10),
		"-async-max-completed", "1000000",
		"-max-wait", strconv.FormatInt(cfg.Grace.Milliseconds(), 10),
		"-grace", "1s",
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	srv, err := startServer(cfg.Server, args, r.dir, r.life, cfg.StartTimeout)
	if err != nil {
		return fmt.Errorf("replica %s, life %d: %w", r.name, r.life, err)
	}
	api, err := client.New("http://"+srv.addr, client.Options{
		HTTPClient: &http.Client{Transport: tr, Timeout: cfg.RequestTimeout},
	})
	if err != nil {
		srv.kill()
		return err
	}
	r.srv = srv
	r.w = &httpWorkload{stressRun: run, cfg: cfg.HTTPConfig, api: api}
	return nil
}

// load starts the replica's clients, which run until ctx ends or
// stopClients; k makes their random streams differ from the others'.
func (r *replica) load(ctx context.Context, k int) {
	ctx, r.stopLoad = context.WithCancel(ctx)
	w := r.w
	n := 0
	rng := func() *rand.Rand {
		n++
		return rand.New(rand.NewPCG(w.cfg.Seed, uint64(k)<<16|uint64(n)))
	}
	for range w.cfg.Submitters {
		c, g := w.rec.HTTPClient(w.api), rng()
		r.clients.Go(func() { w.submitter(ctx, c, g) })
	}
	for range w.cfg.Pollers {
		c, g := w.rec.HTTPClient(w.api), rng()
		r.clients.Go(func() { w.poller(ctx, c, g) })
	}
	for range w.cfg.Waiters {
		c, g := w.rec.HTTPClient(w.api), rng()
		r.clients.Go(func() { w.waiter(ctx, c, g) })
	}
}

// stopClients ends the replica's clients and waits for them.
func (r *replica) stopClients() {
	if r.stopLoad != nil {
		r.stopLoad()
	}
	r.clients.Wait()
}

// drainReplicas waits, through every live replica, on each acknowledged
// job until it is seen ended, then reads the shared queue depth until it
// is zero; each failure is a violation.
func drainReplicas(ctx context.Context, reps []*replica, cfg ReplicasConfig, res *ReplicasResult) {
	var live []*replica
	for _, r := range reps {
		if r.srv != nil {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		res.Violations = append(res.Violations, "no replica left to drain through")
		return
	}
	deadline := time.Now().Add(cfg.JobTimeout + cfg.Lease + cfg.Grace)
	ids := live[0].w.ids()
	var unended atomic.Int64
	var drain sync.WaitGroup
	for k, r := range live {
		var part []string
		for i := k; i < len(ids); i += len(live) {
			part = append(part, ids[i])
		}
		drain.Go(func() {
			r.w.eachJob(part, func(c *HTTPClient, id string) {
				if !r.w.drainOne(ctx, c, id, deadline) {
					unended.Add(1)
				}
			})
		})
	}
	drain.Wait()
	if u := unended.Load(); u > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d acknowledged job(s) not ended within the job deadline (%v) plus the lease (%v) plus %v", u, cfg.JobTimeout, cfg.Lease, cfg.Grace))
	}
	// Jobs whose 202 was lost in the kill are unknown to the clients; they
	// too must end, which the depth shows.
	depth := -1
	for time.Now().Before(deadline) && ctx.Err() == nil {
		m, err := live[0].w.api.Metrics(ctx)
		if err != nil {
			res.Violations = append(res.Violations, "GET /metrics: "+err.Error())
			break
		}
		if depth = int(m["jobledger_queue_depth"]); depth == 0 {
			break
		}
		sleepCtx(ctx, 10*time.Millisecond)
	}
	if depth != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("queue depth %d, not 0, once every job's deadline and lease had passed", depth))
	}
}

// sleepCtx waits d, or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
