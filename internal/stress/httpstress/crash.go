package httpstress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
)

// CrashConfig shapes a crash test: a jobserver binary on a durable store,
// under the HTTP stress's load, killed with SIGKILL at random moments and
// started again on the same store, Cycles times; then one last life that
// is drained and stopped cleanly.
//
// Retention is set to evict nothing during the test (JobTTL an hour,
// MaxCompleted above any run), so every job a 202 named must be readable
// after every restart; the history is checked with
// linearizability.CheckConfig.Retained.
type CrashConfig struct {
	// HTTPConfig gives the clients, the echo jobs and the server's queue
	// bound and workers. Its Duration and MaxOps bound each life's load;
	// its MaxCompleted and JobTTL are ignored (see above).
	HTTPConfig

	// Server is the path of the jobserver binary; Store its -store value
	// (for example sqlite:/tmp/x/jobs.db), the same for every life. Dir
	// holds the address file and each life's log.
	Server, Store, Dir string
	// Cycles is the number of kills, each followed by a restart.
	Cycles int
	// MinLife and MaxLife bound how long a life runs under load before it
	// is killed; each is drawn uniformly between them.
	MinLife, MaxLife time.Duration
	// StartTimeout bounds a start, from exec to listening.
	StartTimeout time.Duration
	// PowerCut, if set, is called after each kill, the server gone: it
	// drops what the store's disk had not made durable (a power cut, as
	// package lossyfs does) before the next life starts. Nil: a kill keeps
	// everything the server wrote, as the page cache does.
	PowerCut func() error

	_ struct{}
}

// DefaultCrashConfig returns 20 kills of lives of 150-450 ms, under 2
// submitters, 2 pollers and 1 waiter, with 2 server workers, echo jobs of up
// to 20 ms, a queue of 8 and a job deadline of 2 s; one submit in 40 waits
// for its job (Prefer: wait=1), fewer than at the HTTP level since a wait
// here takes the queue's 8 jobs of up to 20 ms. Server, Store and Dir are
// left to the caller.
func DefaultCrashConfig() CrashConfig {
	h := DefaultHTTPConfig()
	h.Submitters, h.Runners, h.Pollers, h.Waiters = 2, 2, 2, 1
	h.MaxQueue = 8
	h.Duration, h.MaxOps = time.Hour, 1_000_000 // each life is bounded by MaxLife
	h.MaxSleep, h.JobTimeout, h.SlowEvery = 20*time.Millisecond, 2*time.Second, 0
	h.WaitTimeout, h.Grace = 20*time.Millisecond, 10*time.Second
	h.RequestTimeout = 5 * time.Second
	h.SubmitWaitEvery = 40
	return CrashConfig{
		HTTPConfig: h,
		Cycles:     20, MinLife: 150 * time.Millisecond, MaxLife: 450 * time.Millisecond,
		StartTimeout: 20 * time.Second,
	}
}

func (c CrashConfig) validate() error {
	if err := c.HTTPConfig.validate(); err != nil {
		return err
	}
	switch {
	case c.Server == "" || c.Store == "" || c.Dir == "":
		return errors.New("httpstress: a crash test needs Server, Store and Dir")
	case c.Cycles < 1 || c.MinLife <= 0 || c.MaxLife < c.MinLife || c.StartTimeout <= 0:
		return errors.New("httpstress: Cycles, MinLife, MaxLife or StartTimeout out of range")
	case c.Grace <= c.RequestTimeout:
		return errors.New("httpstress: a crash test's Grace must exceed its RequestTimeout (see crashdeadline.go)")
	}
	return nil
}

// CrashResult is what a crash test recorded and found.
type CrashResult struct {
	Config CrashConfig
	stress.Record
	// Lives is the number of server processes started; Lost counts the
	// operations recorded pending forever (in flight at a kill, mostly).
	Lives int
	Lost  int64
	// Checked counts the reads of acknowledged jobs made right after the
	// restarts.
	Checked int
}

// RunCrash runs the crash test. Each life starts the server on the store,
// first reads every job acknowledged so far (each must exist, and each seen
// terminal must still show that state and error), then puts the load on it
// for a random time and kills it (and cuts the power, with PowerCut). The
// last life drains: every acknowledged
// job must end within the job deadline counted from its admission
// (crashdeadline.go), after which the server is stopped
// with SIGTERM. The history, restarts and all, is for
// linearizability.CheckHTTP with Retained set. It returns an error only for
// a bad configuration or a server that cannot start.
func RunCrash(ctx context.Context, cfg CrashConfig) (*CrashResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	args := append([]string{"-store", cfg.Store}, cfg.serverArgs()...)
	run := newHTTPRun(cfg.Config)
	res := &CrashResult{Config: cfg}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	defer tr.CloseIdleConnections()

	var down []downtime // the server's down times, for the job deadlines
	killed := int64(-1)
	for life := 0; life <= cfg.Cycles; life++ {
		if ctx.Err() != nil {
			res.Violations = append(res.Violations, "interrupted: "+ctx.Err().Error())
			break
		}
		srv, err := startServer(cfg.Server, args, cfg.Dir, life, cfg.StartTimeout)
		if err != nil {
			return nil, fmt.Errorf("life %d: %w", life, err)
		}
		res.Lives++
		if killed >= 0 {
			down = append(down, downtime{from: killed, to: run.rec.Clock().At(time.Now())})
		}
		api, err := client.New("http://"+srv.addr, client.Options{
			HTTPClient: &http.Client{Transport: tr, Timeout: cfg.RequestTimeout},
		})
		if err != nil {
			srv.kill()
			return nil, err
		}
		w := &httpWorkload{httpRun: run, cfg: cfg.HTTPConfig, api: api}
		res.Checked += w.checkSurvivors(life, &res.Record)

		if life == cfg.Cycles {
			w.finalLife(ctx, srv, res, down)
			res.Lost += w.lost.Load()
			break
		}
		up := cfg.MinLife + time.Duration(rng.Int64N(int64(cfg.MaxLife-cfg.MinLife)+1))
		killed = w.loadUntilKill(ctx, srv, up)
		res.Lost += w.lost.Load()
		tr.CloseIdleConnections()
		if cfg.PowerCut != nil {
			if err := cfg.PowerCut(); err != nil {
				return nil, fmt.Errorf("life %d: power cut: %w", life, err)
			}
		}
	}
	rec := run.Record()
	res.Record.History, res.Walks, res.Elapsed = rec.History, rec.Walks, rec.Elapsed
	res.Violations = append(res.Violations, rec.Violations...)
	res.Accepted, res.Rejected = rec.Accepted, rec.Rejected
	res.Replays, res.Conflicts = rec.Replays, rec.Conflicts
	return res, nil
}

// loadUntilKill runs the HTTP stress's clients against srv for up, then
// kills srv while their requests are in flight, and waits for the clients
// to see it. It returns the time of the kill, in the history's clock.
func (w *httpWorkload) loadUntilKill(ctx context.Context, srv *server, up time.Duration) int64 {
	lifeCtx, stop := context.WithCancel(ctx)
	defer stop()
	var clients sync.WaitGroup
	n := 0
	rng := func() *rand.Rand { n++; return rand.New(rand.NewPCG(w.cfg.Seed, uint64(w.rec.Len())<<8|uint64(n))) }
	for range w.cfg.Submitters {
		c, r := NewHTTPClient(w.rec, w.api), rng()
		clients.Go(func() { w.submitter(lifeCtx, c, r) })
	}
	for range w.cfg.Pollers {
		c, r := NewHTTPClient(w.rec, w.api), rng()
		clients.Go(func() { w.poller(lifeCtx, c, r) })
	}
	for range w.cfg.Waiters {
		c, r := NewHTTPClient(w.rec, w.api), rng()
		clients.Go(func() { w.waiter(lifeCtx, c, r) })
	}
	t := time.NewTimer(up)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	killed := w.rec.Clock().At(time.Now())
	srv.signalKill() // first, so that requests are in flight when it dies
	stop()           // then, so that no client starts one while it dies
	srv.kill()
	clients.Wait()
	return killed
}
