package jobapi_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// BenchmarkCycleReplicas runs the asynchronous cycle of BenchmarkCycleStore
// (POST /jobs, GET wait, GET result) on five deployments, alternately in
// one run: one server on the memory store (the baseline), one on SQLite,
// and 1, 2 and 3 servers, replicas named r1, r2, r3, on one PostgreSQL
// database each (pg1, pg2, pg3), from 1, 8 and 32 clients at once. Each
// cycle goes whole to one server of its deployment, the next cycle to the
// next server, round robin, as a load balancer would spread them; in
// shared mode any replica's claimer may run the job. Every server has a
// worker per client and the deployment's queue is 4 times the clients, so
// nothing is refused. It reports each deployment's jobs/s, the p50 and p99
// of a cycle as its client timed it, and NAME-ratio, the memory server's
// time over that deployment's (its jobs/s as a fraction of the memory
// server's).
//
// Each replica opens its own connection pool (pgxpool's default size) and
// its own listener, as cmd/jobserver does. The three databases are made
// once per run and reused by every client count.
func BenchmarkCycleReplicas(b *testing.B) {
	dsns := []string{pgtest.NewDatabase(b), pgtest.NewDatabase(b), pgtest.NewDatabase(b)}
	for _, clients := range []int{1, 8, 32} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			cfg := jobapi.DefaultConfig()
			cfg.Model = "echo"
			cfg.Workers = clients
			cfg.AsyncMaxQueue = 4 * clients
			st := openCycleStore(b, cfg)
			deployments := []*roundRobin{
				{name: "memory", servers: []*cycleClient{cycleServer(b, cfg, memoryStore(b, cfg, nil), clients)}},
				{name: "sqlite", servers: []*cycleClient{cycleServer(b, cfg, ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), clients)}},
			}
			for n, dsn := range dsns {
				d := &roundRobin{name: "pg" + strconv.Itoa(n+1)}
				for r := range n + 1 {
					l, _ := openStore(b, dsn, "r"+strconv.Itoa(r+1), cfg, nil, nil)
					d.servers = append(d.servers, cycleServer(b, cfg, l, clients))
				}
				deployments = append(deployments, d)
			}

			sides := make([]benchcmp.Side, len(deployments))
			lat := make([]*latencies, len(deployments))
			for i, d := range deployments {
				warmUp(b, clients, d.cycle)
				lat[i] = newLatencies(b.N, clients)
				sides[i] = benchcmp.Side{Name: d.name, Op: lat[i].timed(d.cycle)}
			}
			ops, took := benchcmp.AlternateSides(b, clients, cycleStoreChunk, sides...)

			for i, d := range deployments {
				b.ReportMetric(float64(ops)/took[i].Seconds(), d.name+"-jobs/s")
				p50, p99 := lat[i].percentiles()
				b.ReportMetric(float64(p50.Nanoseconds()), d.name+"-p50-ns")
				b.ReportMetric(float64(p99.Nanoseconds()), d.name+"-p99-ns")
			}
		})
	}
}

// warmUp runs op once on each of clients goroutines at once, so that the
// connections a timed run will use are open before it.
func warmUp(b *testing.B, clients int, op func() error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			if err := op(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// roundRobin is one deployment: its servers, each cycle sent whole to the
// next one.
type roundRobin struct {
	name    string
	servers []*cycleClient
	next    atomic.Uint64
}

// cycle runs one cycle on the next server.
func (d *roundRobin) cycle() error {
	i := (d.next.Add(1) - 1) % uint64(len(d.servers))
	return d.servers[i].cycle()
}
