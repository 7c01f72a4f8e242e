package jobapi

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jobledger/jobledger/internal/redact"
	"github.com/jobledger/jobledger/ledger"
)

// Overview is the server's state at a glance, for an operator's console:
// its configuration's bounds, what runs now, the counters /metrics exports
// (since the server started) and the store's health.
type Overview struct {
	Workers  int // Config.Workers
	Busy     int // models running now
	MaxQueue int // Config.AsyncMaxQueue
	Depth    int // jobs PENDING or RUNNING in the store
	Retained int // terminal jobs the store holds

	// The counters of /metrics: admissions, 429s, terminal states.
	Submitted, Rejected    uint64
	Done, Failed, TimedOut uint64
	StoreWriteFailures     uint64

	ShuttingDown bool // Shutdown has begun
	Shared       bool // the store is shared by replicas (shared mode)
	// StoreError is "" while the store's writes commit, else "writes
	// failing since TIME: CAUSE", as GET /healthz says.
	StoreError string
	// Listener is "" for a store without one, else "up" or "down since
	// TIME: CAUSE", as GET /healthz says.
	Listener string

	_ struct{} // forbid positional literals
}

// Overview reports the server's state; it is as cheap as a scrape of
// /metrics and never calls the store but for its Stats.
func (s *Server) Overview() Overview {
	st := s.store.Stats()
	o := Overview{
		Workers: s.cfg.Workers, Busy: int(s.exec.running.Load()),
		MaxQueue: s.cfg.AsyncMaxQueue, Depth: st.Depth, Retained: st.Retained,
		Submitted: counterValue(s.metrics.submitted), Rejected: counterValue(s.metrics.rejected),
		Done:               counterValue(s.metrics.completed.WithLabelValues(ledger.Done.String())),
		Failed:             counterValue(s.metrics.completed.WithLabelValues(ledger.Failed.String())),
		TimedOut:           counterValue(s.metrics.completed.WithLabelValues(ledger.TimedOut.String())),
		StoreWriteFailures: counterValue(s.metrics.writeFailures),
		ShuttingDown:       s.exec.isClosed(),
		Shared:             s.exec.shared != nil,
	}
	o.StoreError = s.storeHealth()
	if s.listener != nil {
		o.Listener = "up"
		if ok, since, err := s.listener.ListenerHealth(); !ok {
			o.Listener = fmt.Sprintf("down since %s: %s", since.UTC().Format(time.RFC3339), redact.Store(err.Error()))
		}
	}
	return o
}

// counterValue reads a counter's value; a counter's Write never fails.
func counterValue(c prometheus.Counter) uint64 {
	var m dto.Metric
	if c.Write(&m) != nil {
		return 0
	}
	return uint64(m.GetCounter().GetValue())
}

// Leases reports the leases the replicas of a shared store hold (see
// ledger.LeaseReporter), or nil for a store that keeps none.
func (s *Server) Leases(ctx context.Context) ([]ledger.ReplicaLeases, error) {
	lr, ok := ledger.As[ledger.LeaseReporter](s.store)
	if !ok {
		return nil, nil
	}
	return lr.Leases(ctx)
}
