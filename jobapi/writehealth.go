package jobapi

import (
	"sync"
	"time"
)

// writeHealth is what the server has seen of the store's writes: whether
// the latest one failed, since when they have been failing, and why. A
// write that commits ends the spell. /healthz and the gauge
// jobledger_store_writes_failing report it.
//
// mu guards the fields below it; it is a leaf, never held with executor.mu.
type writeHealth struct {
	mu      sync.Mutex
	failing bool
	since   time.Time // the first failure of the spell
	err     error     // the latest failure
}

// failed notes a write the store failed at now with err.
func (h *writeHealth) failed(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		h.failing, h.since = true, now
	}
	h.err = err
}

// committed notes a write the store committed.
func (h *writeHealth) committed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing, h.since, h.err = false, time.Time{}, nil
}

// report says whether the store's writes are failing, since when, and
// the latest failure.
func (h *writeHealth) report() (failing bool, since time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failing, h.since, h.err
}

// noteWrite records the outcome of a write of the store: a commit (nil),
// a failure of the store, counted, or a refusal, which says nothing of its
// writes.
func (e *executor) noteWrite(err error) {
	switch {
	case err == nil:
		e.health.committed()
	case storeFailure(err):
		e.metrics.writeFailures.Inc()
		e.health.failed(e.clock.Now(), err)
	}
}
