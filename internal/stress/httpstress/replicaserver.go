package httpstress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/client"
)

// One replica of the multi-replica test (RunReplicas): its server's lives,
// the clients that drive it, and the drain through all replicas.
// replica is one server of the test and the clients that drive it.
type replica struct {
	name, dir string
	life      int
	srv       *server
	w         *httpWorkload
	// peers are the other replicas, whose servers race this one's keyed
	// submits; api is the client of the live server, nil while it is down.
	peers    []*replica
	api      atomic.Pointer[client.Client]
	stopLoad context.CancelFunc
	clients  sync.WaitGroup
}

// start starts a life of the replica's server and a workload on it.
func (r *replica) start(cfg ReplicasConfig, run *httpRun, tr *http.Transport) error {
	args := append([]string{"-store", cfg.Store, "-replica", r.name,
		"-lease", strconv.FormatInt(cfg.Lease.Milliseconds(), 10)}, cfg.serverArgs()...)
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
	r.w = &httpWorkload{httpRun: run, cfg: cfg.HTTPConfig, api: api}
	if len(r.peers) > 0 {
		r.w.peer = func(j int) *client.Client { return r.peers[j%len(r.peers)].api.Load() }
	}
	r.api.Store(api)
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
		c, g := NewHTTPClient(w.rec, w.api), rng()
		r.clients.Go(func() { w.submitter(ctx, c, g) })
	}
	for range w.cfg.Pollers {
		c, g := NewHTTPClient(w.rec, w.api), rng()
		r.clients.Go(func() { w.poller(ctx, c, g) })
	}
	for range w.cfg.Waiters {
		c, g := NewHTTPClient(w.rec, w.api), rng()
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
	ids := live[0].w.IDs()
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
