package httpstress

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jobledger/jobledger/internal/stress"
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
// to 20 ms, a queue of 8 shared by all, a job deadline of 2 s; of the
// submits that wait for their job (Prefer: wait=1, one in 40, as in the
// crash test), one in 10 sends a job of 1.25 s, which the wait does not
// see end (a 202). Server, Store and Dir are left to the caller.
func DefaultReplicasConfig() ReplicasConfig {
	h := DefaultCrashConfig().HTTPConfig
	h.Duration = 3 * time.Second
	h.LongWaitEvery = 10
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
		return errors.New("httpstress: a replicas test needs Server, Store and Dir")
	case c.Replicas < 2:
		return errors.New("httpstress: a replicas test needs at least 2 replicas, one to kill and one to carry on")
	case c.Lease <= 0 || c.KillAt <= 0 || c.DownFor <= 0 || c.KillAt+c.DownFor >= c.Duration || c.StartTimeout <= 0:
		return errors.New("httpstress: Lease, KillAt, DownFor or StartTimeout out of range (the restart must come before the end of Duration)")
	}
	return nil
}

// ReplicasResult is what a multi-replica test recorded and found.
type ReplicasResult struct {
	Config ReplicasConfig
	stress.Record
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
	run := newHTTPRun(cfg.Config)
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
	}
	for i, r := range reps {
		r.peers = append(append([]*replica{}, reps[i+1:]...), reps[:i]...)
	}
	for i := range reps {
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
	stopProgress := run.ReportProgress(loadCtx)
	victim := reps[rand.New(rand.NewPCG(cfg.Seed, 1)).IntN(len(reps))]
	res.Victim = victim.name
	if sleepCtx(loadCtx, cfg.KillAt) {
		victim.srv.kill() // first, so that requests are in flight when it dies
		victim.api.Store(nil)
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
	rec := run.Record()
	res.Record.History, res.Walks, res.Elapsed = rec.History, rec.Walks, rec.Elapsed
	res.Violations = append(res.Violations, rec.Violations...)
	res.Accepted, res.Rejected = rec.Accepted, rec.Rejected
	res.Replays, res.Conflicts = rec.Replays, rec.Conflicts
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
