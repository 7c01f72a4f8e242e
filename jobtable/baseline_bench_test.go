package jobtable_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// ledger is the part of the table the lifecycle benchmark drives, so that
// the table and the baseline run the same code.
type ledger interface {
	Submit(taskID string, r req) (string, error)
	TakeRequest(id string) (req, error)
	Start(id string) (jobtable.Snapshot, error)
	Finish(id string, res string) (jobtable.Snapshot, error)
	Result(id string) (string, jobtable.Snapshot, error)
}

var _ ledger = (*table)(nil)

// mixLedger adds the reads that the read-heavy mix drives.
type mixLedger interface {
	ledger
	Snapshot(id string) (jobtable.Snapshot, error)
	State(id string) (jobtable.State, error)
	Wait(ctx context.Context, id string) (jobtable.Snapshot, error)
}

var (
	_ mixLedger = (*table)(nil)
	_ mixLedger = (*globalLedger)(nil)
)

// globalLedger is the baseline: a ledger built the way the design record
// describes the code before its rework, with one global mutex around every
// field of every job, the id map, the retention order and a plain int depth.
// It has the same admission and retention rules and the same clock and id
// source, and none of the table's concurrency structure.
type globalLedger struct {
	mu           sync.Mutex
	now          func() time.Time
	newID        func() string
	maxQueue     int
	maxCompleted int
	depth        int
	jobs         map[string]*globalJob
	completed    []*globalJob // completion order; a deque
}

type globalJob struct {
	id, taskID                        string
	state                             jobtable.State
	req                               req
	taken                             bool
	res                               string
	err                               error
	createdAt, startedAt, completedAt time.Time
	done                              chan struct{} // closed at the end; nil until a waiter needs it
}

func newGlobalLedger(cfg jobtable.Config) *globalLedger {
	return &globalLedger{
		now: cfg.Now, newID: cfg.NewID, maxQueue: cfg.MaxQueue, maxCompleted: cfg.MaxCompleted,
		jobs: map[string]*globalJob{},
	}
}

func (g *globalLedger) Submit(taskID string, r req) (string, error) {
	now, id := g.now(), g.newID()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.depth >= g.maxQueue {
		return "", jobtable.ErrQueueFull
	}
	g.depth++
	for len(g.completed) > g.maxCompleted {
		delete(g.jobs, g.completed[0].id)
		g.completed[0] = nil
		g.completed = g.completed[1:]
	}
	g.jobs[id] = &globalJob{id: id, taskID: taskID, req: r, createdAt: now}
	return id, nil
}

func (g *globalLedger) TakeRequest(id string) (req, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return req{}, jobtable.ErrNotFound
	}
	if j.taken {
		return req{}, jobtable.ErrRequestTaken
	}
	r := j.req
	j.req, j.taken = req{}, true
	return r, nil
}

func (g *globalLedger) Start(id string) (jobtable.Snapshot, error) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	if j.state != ledgertype.Pending {
		return j.snapshot(), jobtable.ErrNotPending
	}
	j.state, j.startedAt = ledgertype.Running, now
	return j.snapshot(), nil
}

func (g *globalLedger) Finish(id string, res string) (jobtable.Snapshot, error) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	if j.state.Terminal() {
		return j.snapshot(), jobtable.ErrTerminal
	}
	j.state, j.res, j.completedAt = ledgertype.Done, res, now
	j.req = req{}
	g.depth--
	g.completed = append(g.completed, j)
	if j.done != nil {
		close(j.done)
	}
	return j.snapshot(), nil
}

func (g *globalLedger) Snapshot(id string) (jobtable.Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	return j.snapshot(), nil
}

func (g *globalLedger) State(id string) (jobtable.State, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return 0, jobtable.ErrNotFound
	}
	return j.state, nil
}

// Wait blocks on a channel made and closed under the global mutex, and
// takes the mutex again to read the outcome, as the design the table
// replaced read the job again after its wakeup.
func (g *globalLedger) Wait(ctx context.Context, id string) (jobtable.Snapshot, error) {
	g.mu.Lock()
	j := g.jobs[id]
	if j == nil {
		g.mu.Unlock()
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	if j.state.Terminal() {
		defer g.mu.Unlock()
		return j.snapshot(), nil
	}
	if j.done == nil {
		j.done = make(chan struct{})
	}
	done := j.done
	g.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if snap := j.snapshot(); !snap.State.Terminal() {
		return snap, ctx.Err()
	}
	return j.snapshot(), nil
}

func (g *globalLedger) Result(id string) (string, jobtable.Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.jobs[id]
	if j == nil {
		return "", jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	snap := j.snapshot()
	if j.state != ledgertype.Done {
		return "", snap, jobtable.ErrNotDone
	}
	return j.res, snap, nil
}

// snapshot is j's view. g.mu must be held.
func (j *globalJob) snapshot() jobtable.Snapshot {
	return jobtable.Snapshot{
		ID: j.id, TaskID: j.taskID, State: j.state, Err: j.err,
		CreatedAt: j.createdAt, StartedAt: j.startedAt, CompletedAt: j.completedAt,
	}
}

var errLifecycle = errors.New("lifecycle step failed")
