package ledger

import (
	"context"
	"sync/atomic"

	"github.com/jobledger/jobledger/jobtable"
)

// Memory is the in-memory store: a jobtable.Table behind the contract. No
// call but Wait blocks or uses its context. It survives nothing: a restart
// starts empty.
//
// Synchronisation: t is safe for concurrent use (see package jobtable);
// closed is atomic and only ever set.
type Memory[Req, Res any] struct {
	t      *jobtable.Table[Req, Res]
	closed atomic.Bool
}

var (
	_ Ledger[string, string] = (*Memory[string, string])(nil)
	_ Checker                = (*Memory[string, string])(nil)
)

// NewMemory returns an empty in-memory store configured by cfg, or an error
// wrapping ErrInvalidConfig.
func NewMemory[Req, Res any](cfg Config) (*Memory[Req, Res], error) {
	t, err := jobtable.New[Req, Res](cfg)
	if err != nil {
		return nil, err
	}
	return &Memory[Req, Res]{t: t}, nil
}

// Table is the table behind m, for callers that want its extra methods
// (Depth, Len) or its spec-level tests.
func (m *Memory[Req, Res]) Table() *jobtable.Table[Req, Res] { return m.t }

func (m *Memory[Req, Res]) Submit(_ context.Context, s Submission, req Req) (string, bool, error) {
	if m.closed.Load() {
		return "", false, ErrClosed
	}
	if s.Key == "" {
		id, err := m.t.Submit(s.TaskID, req)
		return id, false, err
	}
	return m.t.SubmitKeyed(s, req)
}

func (m *Memory[Req, Res]) LookupKey(_ context.Context, key string) (string, string, error) {
	if m.closed.Load() {
		return "", "", ErrClosed
	}
	return m.t.LookupKey(key)
}

// List reads the page under the table lock: jobtable.Table.List.
func (m *Memory[Req, Res]) List(_ context.Context, q ListQuery) (Page, error) {
	if m.closed.Load() {
		return Page{}, ErrClosed
	}
	tq, err := q.Resolve()
	if err != nil {
		return Page{}, err
	}
	jobs, next, err := m.t.List(tq)
	if err != nil {
		return Page{}, err
	}
	return Page{Jobs: jobs, Next: EncodeCursor(next)}, nil
}

func (m *Memory[Req, Res]) TakeRequest(_ context.Context, id string) (Req, error) {
	if m.closed.Load() {
		var zero Req
		return zero, ErrClosed
	}
	return m.t.TakeRequest(id)
}

func (m *Memory[Req, Res]) Start(_ context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Start(id)
}

func (m *Memory[Req, Res]) Finish(_ context.Context, id string, res Res) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Finish(id, res)
}

func (m *Memory[Req, Res]) Fail(_ context.Context, id string, cause error) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Fail(id, cause)
}

func (m *Memory[Req, Res]) Timeout(_ context.Context, id string, cause error) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Timeout(id, cause)
}

func (m *Memory[Req, Res]) State(_ context.Context, id string) (State, error) {
	if m.closed.Load() {
		return 0, ErrClosed
	}
	return m.t.State(id)
}

func (m *Memory[Req, Res]) Snapshot(_ context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Snapshot(id)
}

func (m *Memory[Req, Res]) Wait(ctx context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	return m.t.Wait(ctx, id)
}

func (m *Memory[Req, Res]) Result(_ context.Context, id string) (Res, Snapshot, error) {
	if m.closed.Load() {
		var zero Res
		return zero, Snapshot{}, ErrClosed
	}
	return m.t.Result(id)
}

func (m *Memory[Req, Res]) Stats() Stats { return m.t.Stats() }

func (m *Memory[Req, Res]) CheckInvariants() error { return m.t.CheckInvariants() }

// Close marks m closed; the table's jobs are left to the garbage collector.
func (m *Memory[Req, Res]) Close() error {
	m.closed.Store(true)
	return nil
}
