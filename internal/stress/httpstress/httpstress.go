package httpstress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// HTTPConfig shapes a stress through the HTTP API. The embedded stress.Config
// gives the clients, the bounds of the run and the ledger's configuration;
// Runners is the server's worker count, since the runner steps happen
// inside the server. WaitTimeout is the timeout of a bounded wait (whole
// milliseconds), Grace bounds the final drain.
type HTTPConfig struct {
	stress.Config
	// MaxSleep bounds the echo model's sleep_ms, drawn per job from
	// [0, MaxSleep], so that jobs stay PENDING and RUNNING for a while.
	MaxSleep time.Duration
	// JobTimeout is the server's async_timeout. One job in SlowEvery
	// sleeps past it and ends TIMEOUT; zero SlowEvery means none does.
	JobTimeout time.Duration
	SlowEvery  int
	// RequestTimeout bounds each HTTP request; a request that runs past it
	// is recorded pending forever.
	RequestTimeout time.Duration
	// One submit in SubmitWaitEvery is a POST /jobs with Prefer: wait=N,
	// N being SubmitWait in whole seconds (at least one: Prefer: wait
	// counts whole seconds), which the server caps at its max_wait
	// (Grace); zero SubmitWaitEvery means none is. The job ends within the
	// wait, and the answer is a 200, unless it is one of the one in
	// LongWaitEvery (zero: none) that sleep a quarter past the wait: the
	// answer is then a 202, where JobTimeout lets the job run that long.
	SubmitWaitEvery int
	SubmitWait      time.Duration
	LongWaitEvery   int

	_ struct{}
}

// DefaultHTTPConfig returns the HTTP level's default shape: 4 submitters,
// 2 server workers, 3 pollers and 2 waiters for 3 s, echo jobs sleeping up
// to 3 ms, MaxQueue 4, MaxCompleted 16, JobTTL 5 ms; one submit in 8 waits
// up to 1 s for its job (Prefer: wait=1), none past it; one in 4 is keyed,
// under 16 keys (DefaultConfig's).
func DefaultHTTPConfig() HTTPConfig {
	sc := stress.DefaultConfig()
	sc.MaxOps = 200_000
	sc.JobTTL = 5 * time.Millisecond
	sc.WaitTimeout = 5 * time.Millisecond
	return HTTPConfig{
		Config:          sc,
		MaxSleep:        3 * time.Millisecond,
		JobTimeout:      50 * time.Millisecond,
		SlowEvery:       25,
		RequestTimeout:  10 * time.Second,
		SubmitWaitEvery: 8,
		SubmitWait:      time.Second,
	}
}

func (c HTTPConfig) validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case c.WaitTimeout < time.Millisecond:
		return errors.New("httpstress: WaitTimeout must be at least 1 ms over HTTP")
	case c.MaxSleep < 0 || c.JobTimeout < time.Millisecond || c.SlowEvery < 0 || c.RequestTimeout <= 0:
		return errors.New("httpstress: MaxSleep, JobTimeout, SlowEvery or RequestTimeout out of range")
	case c.SubmitWaitEvery < 0 || c.LongWaitEvery < 0 || c.SubmitWaitEvery > 0 && (c.SubmitWait < time.Second || c.Grace < time.Second):
		return errors.New("httpstress: SubmitWaitEvery, SubmitWait or LongWaitEvery out of range (a Prefer: wait is whole seconds, and the server's max_wait, Grace, caps it)")
	}
	return nil
}

// HTTPResult is what an HTTP stress recorded and found.
type HTTPResult struct {
	Config HTTPConfig
	stress.Record

	// Lost counts operations recorded pending forever (transport errors,
	// unexpected statuses).
	Lost int64
	// Depth and Retained are read from GET /metrics at the end.
	Depth, Retained int
}

// RunHTTP starts a server (echo model) on 127.0.0.1, drives it through its
// HTTP API with recording clients, then drains: every admitted job is
// waited on until it is seen terminal or gone. At the end it checks what
// the API shows: every admitted job seen ended, the queue depth of
// GET /metrics back to zero, the server's counters agreeing with the
// replies (jobs admitted, rejected and completed), ids unique. It returns
// an error only for a bad configuration or a server that cannot start.
func RunHTTP(ctx context.Context, cfg HTTPConfig) (*HTTPResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	scfg := jobapi.DefaultConfig()
	scfg.Model = "echo"
	scfg.Workers = max(cfg.Runners, 1)
	scfg.MaxWait = cfg.Grace
	scfg.AsyncTimeout = cfg.JobTimeout
	scfg.AsyncMaxQueue = cfg.MaxQueue
	scfg.AsyncMaxCompleted = cfg.MaxCompleted
	scfg.AsyncJobTTL = max(cfg.JobTTL, time.Millisecond)
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](scfg.LedgerConfig())
	if err != nil {
		return nil, err
	}
	defer store.Close()
	srv, err := jobapi.New(store, scfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: scfg.AsyncJobTTL})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	api, err := client.New("http://"+ln.Addr().String(), client.Options{
		HTTPClient: &http.Client{Transport: tr, Timeout: cfg.RequestTimeout},
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	res := runHTTPWorkload(ctx, cfg, api)
	res.readMetrics(api)

	stop, cancel := context.WithTimeout(context.Background(), cfg.Grace)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		res.Violations = append(res.Violations, "server shutdown: "+err.Error())
	}
	// Shutdown has waited for every runner: the server's own bookkeeping
	// (flights, deadline timers, no live job) and its ledger must be at
	// rest now.
	if err := srv.CheckInvariants(); err != nil {
		res.Violations = append(res.Violations, "server invariants after shutdown: "+err.Error())
	}
	hs.Shutdown(stop) // the listener's error is read below
	<-served
	tr.CloseIdleConnections()
	return res, nil
}

func runHTTPWorkload(ctx context.Context, cfg HTTPConfig, api *client.Client) *HTTPResult {
	w := &httpWorkload{httpRun: newHTTPRun(cfg.Config), cfg: cfg, api: api}
	runCtx, stopRun := context.WithTimeout(ctx, cfg.Duration)
	defer stopRun()
	bg := context.Background()

	var clients sync.WaitGroup
	var waiters []*HTTPClient
	n := 0
	rng := func() *rand.Rand { n++; return rand.New(rand.NewPCG(cfg.Seed, uint64(n))) }
	for range cfg.Submitters {
		c, r := NewHTTPClient(w.rec, api), rng()
		clients.Go(func() { w.submitter(runCtx, c, r) })
	}
	for range cfg.Pollers {
		c, r := NewHTTPClient(w.rec, api), rng()
		clients.Go(func() { w.poller(runCtx, c, r) })
	}
	for range cfg.Waiters {
		c, r := NewHTTPClient(w.rec, api), rng()
		waiters = append(waiters, c)
		clients.Go(func() { w.waiter(runCtx, c, r) })
	}
	stopProgress := w.ReportProgress(runCtx)
	clients.Wait()
	stopProgress()

	// Drain: wait on every admitted job until it is seen terminal or gone.
	// A correct server ends every job within JobTimeout; Grace bounds it.
	ids := w.IDs()
	if len(waiters) == 0 {
		waiters = append(waiters, NewHTTPClient(w.rec, api))
	}
	var unended atomic.Int64
	var drain sync.WaitGroup
	deadline := time.Now().Add(cfg.Grace)
	for k, c := range waiters {
		drain.Go(func() {
			for i := k; i < len(ids); i += len(waiters) {
				if !w.drainOne(bg, c, ids[i], deadline) {
					unended.Add(1)
				}
			}
		})
	}
	drain.Wait()

	res := &HTTPResult{Config: cfg, Record: w.Record(), Lost: w.lost.Load()}
	if u := unended.Load(); u > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d admitted job(s) not seen ended within %v of the run's end", u, cfg.Grace))
	}
	seen := make(map[string]bool, len(ids))
	dup := 0
	for _, id := range ids {
		if seen[id] {
			dup++
		}
		seen[id] = true
	}
	if dup > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d job id(s) returned by more than one POST /jobs", dup))
	}
	return res
}

// readMetrics reads GET /metrics once every job has been seen ended, and
// checks the queue depth and the server's counters against the replies.
func (res *HTTPResult) readMetrics(api *client.Client) {
	m, err := api.Metrics(context.Background())
	if err != nil {
		res.Violations = append(res.Violations, "GET /metrics: "+err.Error())
		return
	}
	res.Depth = int(m["jobledger_queue_depth"])
	res.Retained = int(m["jobledger_jobs_retained"])
	if res.Depth != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("queue depth is %d after every job was seen ended, want 0", res.Depth))
	}
	submitted := int64(m["jobledger_jobs_submitted_total"])
	completed := int64(m[`jobledger_jobs_completed_total{state="DONE"}`] +
		m[`jobledger_jobs_completed_total{state="FAILED"}`] + m[`jobledger_jobs_completed_total{state="TIMEOUT"}`])
	if completed != submitted {
		res.Violations = append(res.Violations, fmt.Sprintf("%d jobs admitted but %d terminal transitions counted: each job must end exactly once", submitted, completed))
	}
	if res.Lost > 0 {
		return // a lost reply may hide an admission or a rejection
	}
	if submitted != res.Accepted {
		res.Violations = append(res.Violations, fmt.Sprintf("server counted %d admitted jobs, clients saw %d", submitted, res.Accepted))
	}
	if r := int64(m["jobledger_jobs_rejected_total"]); r != res.Rejected {
		res.Violations = append(res.Violations, fmt.Sprintf("server counted %d rejections, clients saw %d", r, res.Rejected))
	}
}

// serverArgs are the flags of a jobserver process under cfg's load: the
// echo model, cfg's workers, queue bound, job deadline and longest wait,
// and a retention that keeps every job the check reads.
func (cfg HTTPConfig) serverArgs() []string {
	return []string{
		"-model", "echo",
		"-workers", strconv.Itoa(max(cfg.Runners, 1)),
		"-async-max-queue", strconv.Itoa(cfg.MaxQueue),
		"-async-timeout", strconv.FormatInt(cfg.JobTimeout.Milliseconds(), 10),
		"-async-job-ttl", strconv.FormatInt(time.Hour.Milliseconds(), 10),
		"-async-max-completed", "1000000",
		"-max-wait", strconv.FormatInt(cfg.Grace.Milliseconds(), 10),
		"-grace", "1s",
	}
}
