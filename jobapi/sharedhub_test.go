package jobapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// hub is one memory store shared by several replicas in one process, each
// seeing it through its own view with a Shared side, as replicas see one
// PostgreSQL database: Claim takes the oldest PENDING job not yet taken,
// every admission signals every view's Work, every end reaches every
// view's OnEnd. It has no leases: no replica of a test dies.
//
// mu guards queue and views; endMu serialises the OnEnd calls (the
// contract's "never concurrently with itself"). Lock order: endMu, then mu.
type hub struct {
	mem   *ledger.Memory[jobapi.Request, json.RawMessage]
	mu    sync.Mutex
	queue []string // ids in admission order, not yet claimed or ended
	views []*view
	endMu sync.Mutex
}

// view is one replica's store on a hub.
type view struct {
	store
	h    *hub
	work chan struct{}
	ends []func(ledger.Snapshot) // guarded by h.mu
}

var _ ledger.Shared[jobapi.Request] = (*view)(nil)

// newHub is a hub on a memory store with the clock and queue bound given.
func newHub(t *testing.T, clock *fakeClock, maxQueue int) *hub {
	t.Helper()
	return &hub{mem: newMemory(t, clock, maxQueue)}
}

// view returns a new replica's view of the hub.
func (h *hub) view() *view {
	v := &view{store: h.mem, h: h, work: make(chan struct{}, 1)}
	h.mu.Lock()
	h.views = append(h.views, v)
	h.mu.Unlock()
	return v
}

// admitted queues id and signals every view.
func (h *hub) admitted(id string) {
	h.mu.Lock()
	h.queue = append(h.queue, id)
	views := append([]*view(nil), h.views...)
	h.mu.Unlock()
	for _, v := range views {
		select {
		case v.work <- struct{}{}:
		default:
		}
	}
}

// ended calls every view's OnEnd functions with snap.
func (h *hub) ended(snap ledger.Snapshot) {
	h.endMu.Lock()
	defer h.endMu.Unlock()
	h.mu.Lock()
	var fns []func(ledger.Snapshot)
	for _, v := range h.views {
		fns = append(fns, v.ends...)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(snap)
	}
}

func (v *view) Submit(ctx context.Context, s ledger.Submission, req jobapi.Request) (string, bool, error) {
	id, replayed, err := v.store.Submit(ctx, s, req)
	if err == nil && !replayed {
		v.h.admitted(id)
	}
	return id, replayed, err
}

func (v *view) Finish(ctx context.Context, id string, res json.RawMessage) (ledger.Snapshot, error) {
	return v.end(v.store.Finish(ctx, id, res))
}

func (v *view) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return v.end(v.store.Fail(ctx, id, cause))
}

func (v *view) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return v.end(v.store.Timeout(ctx, id, cause))
}

// end passes an end's answer through, telling every view of a transition.
func (v *view) end(snap ledger.Snapshot, err error) (ledger.Snapshot, error) {
	if err == nil {
		v.h.ended(snap)
	}
	return snap, err
}

// Claim takes and starts the oldest queued job whose request is still
// there, under the hub's lock, so that of concurrent claims on any views
// each job goes to one.
func (v *view) Claim(ctx context.Context) (ledger.Snapshot, jobapi.Request, error) {
	v.h.mu.Lock()
	defer v.h.mu.Unlock()
	for len(v.h.queue) > 0 {
		id := v.h.queue[0]
		v.h.queue = v.h.queue[1:]
		req, err := v.store.TakeRequest(ctx, id)
		if err != nil {
			continue // ended or evicted meanwhile
		}
		snap, err := v.store.Start(ctx, id)
		if err != nil {
			continue
		}
		return snap, req, nil
	}
	return ledger.Snapshot{}, jobapi.Request{}, ledger.ErrNoWork
}

func (v *view) Work() <-chan struct{} { return v.work }

func (v *view) OnEnd(fn func(ledger.Snapshot)) {
	v.h.mu.Lock()
	defer v.h.mu.Unlock()
	v.ends = append(v.ends, fn)
}

func (v *view) Now(context.Context) (time.Time, error) { return time.Time{}, errors.New("not used") }

// Close leaves the hub's store open for the other views; newMemory's
// cleanup closes it.
func (v *view) Close() error { return nil }
