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
	_ TenantCounter          = (*Memory[string, string])(nil)
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
	return m.t.SubmitWith(s, req)
}

func (m *Memory[Req, Res]) LookupKey(_ context.Context, tenant, key string) (string, string, error) {
	if m.closed.Load() {
		return "", "", ErrClosed
	}
	return m.t.LookupKey(tenant, key)
}

// hidden reports whether a call scoped by ctx must answer ErrNotFound
// for id: no job has the id, or its tenant is not the scope's. Both are
// the same lookup and the same answer, so a caller cannot tell them apart.
func (m *Memory[Req, Res]) hidden(ctx context.Context, id string) bool {
	scope, scoped := TenantScope(ctx)
	if !scoped {
		return false
	}
	owner, ok := m.t.Tenant(id)
	return !ok || owner != scope
}

// List reads the page under the table lock: jobtable.Table.List.
func (m *Memory[Req, Res]) List(ctx context.Context, q ListQuery) (Page, error) {
	if m.closed.Load() {
		return Page{}, ErrClosed
	}
	tq, err := q.Resolve(ctx)
	if err != nil {
		return Page{}, err
	}
	jobs, next, err := m.t.List(tq)
	if err != nil {
		return Page{}, err
	}
	return Page{Jobs: jobs, Next: EncodeCursor(next)}, nil
}

func (m *Memory[Req, Res]) TakeRequest(ctx context.Context, id string) (Req, error) {
	if m.closed.Load() {
		var zero Req
		return zero, ErrClosed
	}
	if m.hidden(ctx, id) {
		var zero Req
		return zero, ErrNotFound
	}
	return m.t.TakeRequest(id)
}

func (m *Memory[Req, Res]) Start(ctx context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Start(id)
}

func (m *Memory[Req, Res]) Finish(ctx context.Context, id string, res Res) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Finish(id, res)
}

func (m *Memory[Req, Res]) Fail(ctx context.Context, id string, cause error) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Fail(id, cause)
}

func (m *Memory[Req, Res]) Timeout(ctx context.Context, id string, cause error) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Timeout(id, cause)
}

func (m *Memory[Req, Res]) State(ctx context.Context, id string) (State, error) {
	if m.closed.Load() {
		return 0, ErrClosed
	}
	if m.hidden(ctx, id) {
		return 0, ErrNotFound
	}
	return m.t.State(id)
}

func (m *Memory[Req, Res]) Snapshot(ctx context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Snapshot(id)
}

func (m *Memory[Req, Res]) Wait(ctx context.Context, id string) (Snapshot, error) {
	if m.closed.Load() {
		return Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		return Snapshot{}, ErrNotFound
	}
	return m.t.Wait(ctx, id)
}

func (m *Memory[Req, Res]) Result(ctx context.Context, id string) (Res, Snapshot, error) {
	if m.closed.Load() {
		var zero Res
		return zero, Snapshot{}, ErrClosed
	}
	if m.hidden(ctx, id) {
		var zero Res
		return zero, Snapshot{}, ErrNotFound
	}
	return m.t.Result(id)
}

func (m *Memory[Req, Res]) Stats() Stats { return m.t.Stats() }

func (m *Memory[Req, Res]) TenantDepth(_ context.Context, tenant string) (int, error) {
	if m.closed.Load() {
		return 0, ErrClosed
	}
	return m.t.TenantDepth(tenant), nil
}

func (m *Memory[Req, Res]) CheckInvariants() error { return m.t.CheckInvariants() }

// Close marks m closed; the table's jobs are left to the garbage collector.
func (m *Memory[Req, Res]) Close() error {
	m.closed.Store(true)
	return nil
}
