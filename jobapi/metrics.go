package jobapi

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus series, on a registry of its own so
// that two servers in one process never collide (each exports the process
// and Go runtime collectors too).
type metrics struct {
	registry  *prometheus.Registry
	submitted prometheus.Counter
	rejected  prometheus.Counter
	completed *prometheus.CounterVec // by terminal state
	queueWait prometheus.Histogram
	runTime   prometheus.Histogram
	waiters   prometheus.Gauge
	requests  *prometheus.CounterVec // by route and code
	// writeFailures counts the store's writes that failed (writehealth.go).
	writeFailures prometheus.Counter
	// tenantSubmitted and tenantRejected count by the tenant of the token
	// (and, refused, by whose bound was full): labels only from the token
	// file, never from what a client sends.
	tenantSubmitted *prometheus.CounterVec
	tenantRejected  *prometheus.CounterVec
	// tenants are the tenants of the tokens that submitted, whose live
	// jobs jobledger_tenant_queue_depth reports (tenantLive).
	tenants tenantSet
}

// tenantSet is a set of tenant names, safe for concurrent use.
type tenantSet struct {
	mu    sync.Mutex
	names map[string]struct{}
}

func (s *tenantSet) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]struct{}{}
	}
	s.names[name] = struct{}{}
}

func (s *tenantSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.names))
}

// tenantLive is the gauge of each tenant's live jobs, read from the store
// at each scrape for the tenants of tenantSet, when the store counts them
// (ledger.TenantCounter).
type tenantLive struct {
	desc    *prometheus.Desc
	tenants *tenantSet
	count   ledger.TenantCounter
}

func (c tenantLive) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c tenantLive) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), tenantScrapeBound)
	defer cancel()
	for _, t := range c.tenants.list() {
		if n, err := c.count.TenantDepth(ctx, t); err == nil {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), t)
		}
	}
}

// tenantScrapeBound bounds the store's counts of one scrape.
const tenantScrapeBound = 5 * time.Second

// countTenant counts a submit of who that the store answered with err.
func (m *metrics) countTenant(who tenancy, err error) {
	if !who.named {
		return
	}
	m.tenants.add(who.tenant)
	switch {
	case err == nil:
		m.tenantSubmitted.WithLabelValues(who.tenant).Inc()
	case errors.Is(err, ledger.ErrTenantQueueFull):
		m.tenantRejected.WithLabelValues(who.tenant, "tenant").Inc()
	case errors.Is(err, ledger.ErrQueueFull):
		m.tenantRejected.WithLabelValues(who.tenant, "ledger").Inc()
	}
}

// latencyBuckets span 100 µs to about 100 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 4, 11)

// newMetrics registers the series; health reports the store's writes, and
// listener, if not nil, adds the gauge of the store's listener.
func newMetrics(stats func() ledger.Stats, listener listenerHealth, health *writeHealth, counter ledger.TenantCounter) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		submitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobledger_jobs_submitted_total",
			Help: "Jobs admitted by POST /jobs.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobledger_jobs_rejected_total",
			Help: "Jobs refused by POST /jobs because the queue was full (429).",
		}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobledger_jobs_completed_total",
			Help: "Jobs that reached a terminal state, by state.",
		}, []string{"state"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "jobledger_job_queue_wait_seconds",
			Help:    "Time from admission to start, for jobs that started.",
			Buckets: latencyBuckets,
		}),
		runTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "jobledger_job_run_seconds",
			Help:    "Time from start to the terminal state, for jobs that started.",
			Buckets: latencyBuckets,
		}),
		waiters: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jobledger_waiters",
			Help: "Clients blocked in a wait: GET /jobs/{id}/wait, or POST /jobs with Prefer: wait.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobledger_http_requests_total",
			Help: "HTTP requests served, by route and status code; 499 for a request whose client went away before any reply.",
		}, []string{"route", "code"}),
		writeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobledger_store_write_failures_total",
			Help: "Writes the store failed (a full disk, an I/O error), each retry counted.",
		}),
		tenantSubmitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobledger_tenant_jobs_submitted_total",
			Help: "Jobs admitted by POST /jobs, by the tenant of the token.",
		}, []string{"tenant"}),
		tenantRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobledger_tenant_jobs_rejected_total",
			Help: "Jobs refused by POST /jobs (429), by the tenant of the token and whose bound was full: tenant or ledger.",
		}, []string{"tenant", "bound"}),
	}
	for _, s := range ledgertype.States() {
		if s.Terminal() {
			m.completed.WithLabelValues(s.String()) // every state appears from the start
		}
	}
	if counter != nil {
		m.registry.MustRegister(tenantLive{
			desc: prometheus.NewDesc("jobledger_tenant_queue_depth",
				"Admitted jobs not yet terminal, by the tenant of the token that submitted them (tenants that submitted since the server started).",
				[]string{"tenant"}, nil),
			tenants: &m.tenants, count: counter,
		})
	}
	m.registry.MustRegister(
		m.submitted, m.rejected, m.completed, m.queueWait, m.runTime, m.waiters, m.requests, m.writeFailures,
		m.tenantSubmitted, m.tenantRejected,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobledger_store_writes_failing",
			Help: "1 from a write the store failed until one commits, 0 otherwise.",
		}, func() float64 {
			if failing, _, _ := health.report(); failing {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobledger_queue_depth",
			Help: "Admitted jobs not yet terminal (PENDING or RUNNING).",
		}, func() float64 { return float64(stats().Depth) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobledger_jobs_retained",
			Help: "Terminal jobs retained for their results.",
		}, func() float64 { return float64(stats().Retained) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobledger_jobs_held",
			Help: "Jobs the ledger holds, terminal or not.",
		}, func() float64 { return float64(stats().Jobs) }),
		// The process's memory, CPU and open files, and the Go runtime's
		// goroutines, heap and GC: what an operator checks first when a
		// server misbehaves.
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
	)
	if listener != nil {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobledger_store_listener_up",
			Help: "1 while the store's listener, which hears the other replicas' ends and admissions, is connected; 0 while waits poll instead.",
		}, func() float64 {
			if ok, _, _ := listener.ListenerHealth(); ok {
				return 1
			}
			return 0
		}))
	}
	return m
}

// request counts one HTTP reply.
func (m *metrics) request(route string, code int) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
}

// listenerHealth is what a store whose replicas hear each other through a
// connection of its own (the PostgreSQL store's listener) reports of it,
// found with ledger.As: whether it is connected, since when it is so or
// not, and while it is not, why. While it is down, waits see ends late.
type listenerHealth interface {
	ListenerHealth() (ok bool, since time.Time, err error)
}
