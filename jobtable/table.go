package jobtable

import (
	"fmt"
	"sync/atomic"
)

// Table is the job ledger: identity, admission, the state machine,
// retention and wait/notify. It runs nothing itself; its owner executes jobs
// and reports their outcome. All methods are safe for concurrent use.
//
// Synchronisation (seed contract items in brackets):
//
//   - depth: atomic [3]. Admission is a CAS loop, so the queue-full check and
//     the increment are one atomic step. The terminal transition is
//     its only decrement, exactly once per job [4].
//   - jobs: the id map, a jobIndex. A lookup takes no lock at all, so
//     readers of any jobs never contend, and none waits for a Submit.
//   - mu guards retained, the retention list, keys and keyOf, the
//     idempotency keys' index, and order, the admission order that List walks, and
//     makes its holder the one
//     writer of jobs: Submit evicts and inserts, and the terminal
//     transition appends to retained, all under mu [5]. Neither the list
//     (a retentionList) nor the index takes a lock of its own. (tableMutex
//     is sync.Mutex; in the traced build it numbers its critical sections,
//     see trace_section.go.)
//   - evictedTTL, evictedLRU: atomic counters for Stats.
//
// Lock order: mu, then a job's mu (terminate, List, checkInvariants); never the reverse, so no deadlock is
// possible [5]. A lookup holds no lock, so it takes part in no order.
//
// A lookup can return a job that a Submit evicts a moment later: the
// caller then holds a job no longer in jobs. Only terminal jobs are
// evicted, and a terminal job never changes again (the state machine makes
// every later transition a refused no-op and TakeRequest answers
// ErrTerminal), so every call on it answers as it would have at the
// moment of the lookup, before the eviction: the call is linearised there.
//
// Invariants (checked by checkInvariants, named as in spec/JobTable.tla):
//   - 0 <= depth <= max(MaxQueue, 0).
//   - depth equals the number of non-terminal jobs in jobs, counting a
//     Submit between its CAS and its insertion.
//   - each job of jobs is filed under its own id, once (the index's own
//     invariants: see jobIndex).
//   - the retention list holds exactly the terminal jobs of jobs, each
//     once, in the order they completed (TTL eviction looks only at its
//     front).
//   - a non-terminal job is never evicted.
//   - each tenant's record counts its live jobs and its jobs in jobs
//     (TenantDepthInv; tenant.go).
type Table[Req, Res any] struct {
	cfg Config

	depth atomic.Int32

	mu       tableMutex
	jobs     jobIndex[Req, Res]            // read without a lock; written under mu
	retained retentionList[*job[Req, Res]] // terminal jobs, least recently completed first
	// keys indexes the jobs submitted under an idempotency key, by tenant and key,
	// each with its request's digest, and keyOf gives each such job its
	// key: both written under mu, with the insertion and with the
	// eviction of the job (keyed.go). Invariant (KeyInv): keys[k] is a job
	// of jobs that is keyed and whose keyOf is k, and every keyed job of
	// jobs is keys[keyOf[it]]: at most one retained job per key.
	keys  map[keyOwner]keyHolder[Req, Res]
	keyOf map[*job[Req, Res]]string
	// order holds every job of jobs in the order of admission, each with
	// its ordinal: written under mu, with the insertion and with the
	// eviction (admissionorder.go). Invariant (ListOrderInv): it holds
	// exactly the jobs of jobs, each where its pos says.
	order admissionOrder[*job[Req, Res]]

	// tenants holds a record for each tenant with jobs in jobs, written
	// under mu (tenant.go). Invariant (TenantDepthInv): each record's
	// counts are the number of its non-terminal jobs and of its jobs in
	// jobs, and every job points to its tenant's record.
	tenants map[string]*tenant

	evictedTTL atomic.Uint64
	evictedLRU atomic.Uint64
}

// New returns an empty table configured by cfg. It fails, wrapping
// ErrInvalidConfig, if cfg holds a value out of range.
func New[Req, Res any](cfg Config) (*Table[Req, Res], error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	t := &Table[Req, Res]{cfg: cfg}
	t.jobs.init()
	return t, nil
}

// Submit admits a job carrying req and returns its id, or ErrQueueFull when
// MaxQueue jobs are already PENDING or RUNNING. taskID is the request's own
// identifier, echoed in every Snapshot. Before inserting the job, Submit
// evicts expired terminal jobs: by JobTTL, then beyond MaxCompleted.
//
// Submit panics if Config.NewID repeats an id, and lets a panic of an
// injected Now or NewID through; either way it undoes its admission, so
// depth still counts only the jobs the table holds (DepthInv) and a caller
// that recovers can go on using the table.
//
// Spec actions: SubmitLoad and SubmitCAS (admit, the retry loop), then
// SubmitInsert (eviction and insertion under the table lock).
func (t *Table[Req, Res]) Submit(taskID string, req Req) (string, error) {
	return t.submit("", taskID, req)
}

// SubmitWith is Submit of req for s: under s.Key, if any, as SubmitKeyed;
// for s.Tenant, whose job it is; and held to s.TenantMaxQueue, if
// positive, beside MaxQueue: ErrTenantQueueFull when the tenant has that
// many live jobs, else ErrQueueFull when the table has MaxQueue. A bounded
// submission checks and counts both bounds in one critical section.
func (t *Table[Req, Res]) SubmitWith(s Submission, req Req) (id string, replayed bool, err error) {
	if s.Key == "" && s.TenantMaxQueue <= 0 {
		id, err = t.submit(s.Tenant, s.TaskID, req)
		return id, false, err
	}
	return t.submitLocked(s, req)
}

// submit is the admission of a submission with no key and no bound of its
// tenant's: a compare-and-swap of depth, then the insertion under mu.
func (t *Table[Req, Res]) submit(tenant, taskID string, req Req) (string, error) {
	if !t.admit() {
		return "", ErrQueueFull
	}
	inserted := false
	defer func() {
		if !inserted {
			t.depth.Add(-1) // a panic below: undo the admission
		}
	}()
	now := t.cfg.Now()
	id := t.cfg.NewID()
	j := &job[Req, Res]{id: id, taskID: taskID, createdAt: now, req: req}

	t.mu.Lock()
	defer t.mu.Unlock()
	traceAtomic() // eviction and insertion, one step of the trace
	t.evictLocked(now)
	t.insertLocked(j, tenant)
	inserted = true
	traceSubmitInsert(t, id)
	return id, nil
}

// insertLocked files the new job j of tenant under its id and at the end
// of the admission order, which gives it its ordinal, and counts it in its
// tenant's live jobs. It panics, changing nothing, if the id is taken.
// t.mu must be held.
func (t *Table[Req, Res]) insertLocked(j *job[Req, Res], tenant string) {
	// Counted, and so given its tenant, before it is filed: a reader that
	// finds j by its id reads j.tn without a lock.
	t.countLocked(j, tenant)
	if !t.jobs.insertLocked(j) {
		t.uncountLocked(j)
		t.releaseLocked(j)
		panic(fmt.Sprintf("jobtable: Config.NewID returned duplicate id %q", j.id))
	}
	j.ord, j.pos = t.order.push(j)
}

// lookup returns the job with the given id, or nil. It takes no lock: the
// job it returns may be evicted as soon as it returns, which only a
// terminal job can be (see Table).
func (t *Table[Req, Res]) lookup(id string) *job[Req, Res] {
	traceAtomic()
	j := t.jobs.lookup(id)
	traceLookup(id, j == nil)
	return j
}

// Depth returns the number of admitted jobs that are not yet terminal.
func (t *Table[Req, Res]) Depth() int { return int(t.depth.Load()) }

// Len returns the number of jobs the table holds, terminal or not.
func (t *Table[Req, Res]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.jobs.live
}

// Stats returns counts for metrics. Its fields are read one after another,
// not as one atomic view.
func (t *Table[Req, Res]) Stats() Stats {
	t.mu.Lock()
	jobs, retained := t.jobs.live, t.retained.len()
	t.mu.Unlock()
	return Stats{
		Depth:      t.Depth(),
		Jobs:       jobs,
		Retained:   retained,
		EvictedTTL: t.evictedTTL.Load(),
		EvictedLRU: t.evictedLRU.Load(),
	}
}

// admit takes one slot of MaxQueue. The check and the increment are one
// compare-and-swap, so two submitters can never both take the last slot,
// and depth is never read unsynchronised.
//
// Spec actions: SubmitLoad, SubmitCAS.
func (t *Table[Req, Res]) admit() bool {
	limit := int32(max(t.cfg.MaxQueue, 0))
	for {
		traceAtomic()
		d := t.depth.Load()
		traceSubmitLoad(d)
		if d >= limit {
			return false
		}
		traceAtomic()
		if traceSubmitCAS(t.depth.CompareAndSwap(d, d+1), d+1) {
			return true
		}
	}
}
