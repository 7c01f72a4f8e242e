package jobapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// cycleStoreChunk is how many cycles each client runs on one store before
// the clients switch to the other.
const cycleStoreChunk = 4

// BenchmarkCycleStore compares the asynchronous cycle (POST /jobs, GET
// wait, GET result) on the SQLite store (the subject) with the same cycle
// on the memory store (the baseline), from 1, 8 and 32 clients at once,
// alternately in one run, each server on its own loopback listener with
// the echo model at sleep 0. ratio is the SQLite server's jobs/s as a
// fraction of the memory server's. Besides it reports each side's jobs/s,
// the p50 and p99 of a cycle as its client timed it, and the SQLite
// store's commits per job: each commit is one fsync of its log (WAL,
// synchronous=FULL), and a job is three writes (Submit, Start, Finish).
//
// Every client has one job in flight, and each server has a worker per
// client and a queue larger than the clients, so no request is refused: a
// status other than the one expected fails the benchmark.
func BenchmarkCycleStore(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			cfg := jobapi.DefaultConfig()
			cfg.Model = "echo"
			cfg.Workers = clients
			cfg.AsyncMaxQueue = 4 * clients
			st := openCycleStore(b, cfg)
			durable := cycleServer(b, cfg, ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), clients)
			memory := cycleServer(b, cfg, memoryStore(b, cfg, nil), clients)
			c0 := st.WriteStats().Commits

			sqliteLat, memoryLat := newLatencies(b.N, clients), newLatencies(b.N, clients)
			r := benchcmp.AlternateParallel(b, clients, cycleStoreChunk,
				sqliteLat.timed(durable.cycle), memoryLat.timed(memory.cycle))

			jobs := float64(r.Ops)
			b.ReportMetric(jobs/r.Subject.Seconds(), "sqlite-jobs/s")
			b.ReportMetric(jobs/r.Baseline.Seconds(), "memory-jobs/s")
			b.ReportMetric(float64(st.WriteStats().Commits-c0)/jobs, "sqlite-commits/job")
			for _, side := range []struct {
				name string
				lat  *latencies
			}{{"sqlite", sqliteLat}, {"memory", memoryLat}} {
				p50, p99 := side.lat.percentiles()
				b.ReportMetric(float64(p50.Nanoseconds()), side.name+"-p50-ns")
				b.ReportMetric(float64(p99.Nanoseconds()), side.name+"-p99-ns")
			}
		})
	}
}

// openCycleStore opens a SQLite store on a fresh file with the queue and
// retention cfg gives the memory store, as New would open `sqlite:PATH`;
// it is closed after the server on it (cycleServer's cleanup runs first).
func openCycleStore(b *testing.B, cfg jobapi.Config) *sqlite.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "jobs.db"), ledger.Config{
		MaxQueue:     cfg.AsyncMaxQueue,
		JobTTL:       cfg.AsyncJobTTL,
		MaxCompleted: cfg.AsyncMaxCompleted,
	}, sqlite.Options{})
	require.NoError(b, err)
	b.Cleanup(func() {
		require.NoError(b, st.CheckInvariants())
		require.NoError(b, st.Close())
	})
	return st
}

// cycleClient runs cycles against one server on a loopback listener.
type cycleClient struct {
	url    string
	client *http.Client
}

// cycleServer starts a server with cfg on l,
// serves it on a loopback listener, and returns a client that keeps a
// connection per client alive. Its cleanup shuts the server down, stops
// the listener and the client's connections, and closes the server.
func cycleServer(b *testing.B, cfg jobapi.Config, l ledger.Ledger[jobapi.Request, json.RawMessage], clients int) *cycleClient {
	b.Helper()
	srv, err := jobapi.New(l, cfg, jobapi.Options{Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(b, err)
	ts := httptest.NewServer(srv)
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	b.Cleanup(func() {
		require.NoError(b, srv.Shutdown(context.Background()))
		ts.Close()
		transport.CloseIdleConnections()
		require.NoError(b, srv.Close())
	})
	return &cycleClient{url: ts.URL, client: &http.Client{Transport: transport}}
}

// cycle runs one job through the API: POST /jobs, GET wait, GET result.
func (c *cycleClient) cycle() error {
	const body = `{"task_id":"bench","params":{"sleep_ms":0}}`
	resp, err := c.call(http.MethodPost, "/jobs", body, http.StatusAccepted)
	if err != nil {
		return err
	}
	u, err := resp.Request.URL.Parse(resp.Header.Get("Location")) // a relative reference
	if err != nil {
		return err
	}
	loc := u.Path
	if _, err := c.call(http.MethodGet, loc+"/wait", "", http.StatusOK); err != nil {
		return err
	}
	_, err = c.call(http.MethodGet, loc+"/result", "", http.StatusOK)
	return err
}

// call sends one request, reads the whole reply, and fails on any status
// but want.
func (c *cycleClient) call(method, path, payload string, want int) (*http.Response, error) {
	var r io.Reader
	if payload != "" {
		r = strings.NewReader(payload)
	}
	req, err := http.NewRequest(method, c.url+path, r)
	if err != nil {
		return nil, err
	}
	if payload != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d", method, path, resp.StatusCode, want)
	}
	return resp, nil
}

// latencies keeps the duration of every operation of one side, from any
// number of goroutines: each takes the next slot with one atomic add.
type latencies struct {
	d []time.Duration
	n atomic.Int64
}

// newLatencies has room for the operations benchcmp.AlternateParallel
// runs for a b.N of n with procs goroutines: fewer than n+procs, as its
// last round runs at most one more operation per goroutine than needed.
func newLatencies(n, procs int) *latencies {
	return &latencies{d: make([]time.Duration, n+procs)}
}

// timed returns op, which also records how long each call took.
func (l *latencies) timed(op func() error) func() error {
	return func() error {
		start := time.Now()
		err := op()
		l.d[l.n.Add(1)-1] = time.Since(start)
		return err
	}
}

// percentiles returns the p50 and p99 of the recorded durations (nearest
// rank).
func (l *latencies) percentiles() (p50, p99 time.Duration) {
	d := l.d[:l.n.Load()]
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	rank := func(p int) time.Duration { return d[max(0, (len(d)*p+99)/100-1)] }
	return rank(50), rank(99)
}
