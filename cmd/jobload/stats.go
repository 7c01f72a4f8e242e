package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// recorder collects the outcome of every operation.
//
// mu guards every field.
type recorder struct {
	mu        sync.Mutex
	limit     int64 // operations to start in all; 0: no limit
	started   int64
	latencies []time.Duration // of successful operations
	rejected  int64
	errors    int64
}

func newRecorder(limit int64) *recorder { return &recorder{limit: limit} }

// take reports whether another operation may start, counting it.
func (r *recorder) take() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limit > 0 && r.started >= r.limit {
		return false
	}
	r.started++
	return true
}

func (r *recorder) record(res result, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch res {
	case resultOK:
		r.latencies = append(r.latencies, d)
	case resultRejected:
		r.rejected++
	default:
		r.errors++
	}
}

// finished is the number of operations recorded, whatever their result.
func (r *recorder) finished() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.latencies)) + r.rejected + r.errors
}

func (r *recorder) progress(elapsed time.Duration) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := len(r.latencies)
	return fmt.Sprintf("%5.1fs ok=%d 429=%d errors=%d (%.1f ok/s)",
		elapsed.Seconds(), ok, r.rejected, r.errors, float64(ok)/elapsed.Seconds())
}

// summary is the end-of-run report.
type summary struct {
	mode          string
	clients       int
	elapsed       time.Duration
	ok            int
	rejected      int64
	errors        int64
	p50, p90, p99 time.Duration
	max           time.Duration
	stopped       string // which bound ended the run
}

func (r *recorder) summary(s settings, elapsed time.Duration, stopped string) summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat := slices.Clone(r.latencies)
	slices.Sort(lat)
	sum := summary{mode: s.mode, clients: s.clients, elapsed: elapsed, ok: len(lat), rejected: r.rejected, errors: r.errors,
		stopped: stopped}
	sum.p50, sum.p90, sum.p99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
	if len(lat) > 0 {
		sum.max = lat[len(lat)-1]
	}
	return sum
}

// percentile is the nearest-rank p-th percentile of sorted; 0 when empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func (s summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode=%s clients=%d elapsed=%.2fs\n", s.mode, s.clients, s.elapsed.Seconds())
	fmt.Fprintf(&b, "ok=%d rejected_429=%d errors=%d\n", s.ok, s.rejected, s.errors)
	fmt.Fprintf(&b, "throughput=%.1f ok/s\n", float64(s.ok)/s.elapsed.Seconds())
	fmt.Fprintf(&b, "latency p50=%v p90=%v p99=%v max=%v\n", s.p50, s.p90, s.p99, s.max)
	fmt.Fprintf(&b, "stopped: %s\n", s.stopped)
	return b.String()
}
