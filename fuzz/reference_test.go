package fuzz

import (
	"context"
	"strconv"
	"time"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// refJob is one job of the reference model.
type refJob struct {
	id, taskID, req string
	state           jobtable.State
	taken           bool
	res             string
	err             error
	created         time.Time
	started         time.Time
	completed       time.Time
}

func (j *refJob) snapshot() jobtable.Snapshot {
	return jobtable.Snapshot{
		ID: j.id, TaskID: j.taskID, State: j.state, Err: j.err,
		CreatedAt: j.created, StartedAt: j.started, CompletedAt: j.completed,
	}
}

// reference is the ledger written as plainly as possible: a map of jobs, a
// slice of terminal ids in completion order, and a depth counter. No
// concurrency, no cleverness; it is what the table must agree with.
type reference struct {
	maxQueue     int           // <= 0 admits nothing
	ttl          time.Duration // <= 0: never expire by time
	maxCompleted int           // <= 0: no bound
	now          func() time.Time

	jobs     map[string]*refJob
	retained []string // terminal job ids, least recently completed first
	depth    int
	issued   int // ids handed out: "j1" ... "jN"

	evictedTTL, evictedLRU uint64
}

// newReference mirrors jobtable.New's defaults for cfg.
func newReference(cfg jobtable.Config) *reference {
	r := &reference{
		maxQueue: cfg.MaxQueue, ttl: cfg.JobTTL, maxCompleted: cfg.MaxCompleted,
		now: cfg.Now, jobs: make(map[string]*refJob),
	}
	if r.ttl == 0 {
		r.ttl = jobtable.DefaultJobTTL
	}
	if r.maxCompleted == 0 {
		r.maxCompleted = jobtable.DefaultMaxCompleted
	}
	return r
}

func (r *reference) submit(taskID, req string) (string, error) {
	if r.depth >= r.maxQueue {
		return "", jobtable.ErrQueueFull
	}
	now := r.now()
	r.issued++
	id := "j" + strconv.Itoa(r.issued)
	r.evict(now)
	r.jobs[id] = &refJob{id: id, taskID: taskID, req: req, state: ledgertype.Pending, created: now}
	r.depth++
	return id, nil
}

// evict drops terminal jobs whose TTL has passed at now, then the least
// recently completed beyond maxCompleted.
func (r *reference) evict(now time.Time) {
	if r.ttl > 0 {
		for len(r.retained) > 0 && now.Sub(r.jobs[r.retained[0]].completed) >= r.ttl {
			r.dropFront()
			r.evictedTTL++
		}
	}
	if r.maxCompleted > 0 {
		for len(r.retained) > r.maxCompleted {
			r.dropFront()
			r.evictedLRU++
		}
	}
}

func (r *reference) dropFront() {
	delete(r.jobs, r.retained[0])
	r.retained = r.retained[1:]
}

func (r *reference) takeRequest(id string) (string, error) {
	j := r.jobs[id]
	switch {
	case j == nil:
		return "", jobtable.ErrNotFound
	case j.state.Terminal():
		return "", jobtable.ErrTerminal // the end drops the request
	case j.taken:
		return "", jobtable.ErrRequestTaken
	}
	j.taken = true
	return j.req, nil
}

func (r *reference) start(id string) (jobtable.Snapshot, error) {
	j := r.jobs[id]
	switch {
	case j == nil:
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	case j.state != ledgertype.Pending:
		return j.snapshot(), jobtable.ErrNotPending
	}
	j.state, j.started = ledgertype.Running, r.now()
	return j.snapshot(), nil
}

func (r *reference) terminate(id string, to jobtable.State, res string, err error) (jobtable.Snapshot, error) {
	j := r.jobs[id]
	switch {
	case j == nil:
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	case j.state.Terminal():
		return j.snapshot(), jobtable.ErrTerminal
	}
	j.state, j.res, j.err, j.completed = to, res, err, r.now()
	r.depth--
	r.retained = append(r.retained, id)
	return j.snapshot(), nil
}

func (r *reference) snapshot(id string) (jobtable.Snapshot, error) {
	j := r.jobs[id]
	if j == nil {
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	}
	return j.snapshot(), nil
}

func (r *reference) result(id string) (string, jobtable.Snapshot, error) {
	j := r.jobs[id]
	switch {
	case j == nil:
		return "", jobtable.Snapshot{}, jobtable.ErrNotFound
	case j.state != ledgertype.Done:
		return "", j.snapshot(), jobtable.ErrNotDone
	}
	return j.res, j.snapshot(), nil
}

// waitCancelled is Wait with a context that has already ended: a terminal
// job answers at once, any other its current view and the context's error.
func (r *reference) waitCancelled(id string) (jobtable.Snapshot, error) {
	j := r.jobs[id]
	switch {
	case j == nil:
		return jobtable.Snapshot{}, jobtable.ErrNotFound
	case j.state == ledgertype.Done || j.state == ledgertype.Failed || j.state == ledgertype.TimedOut:
		return j.snapshot(), nil
	}
	return j.snapshot(), context.Canceled
}

func (r *reference) stats() jobtable.Stats {
	return jobtable.Stats{
		Depth: r.depth, Jobs: len(r.jobs), Retained: len(r.retained),
		EvictedTTL: r.evictedTTL, EvictedLRU: r.evictedLRU,
	}
}
