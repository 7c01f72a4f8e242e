package jobtable

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// CheckInvariants reports every invariant of the ledger's contract that t
// violates, joined, or nil: the same clauses, under the same names, as the
// invariants of spec/JobTable.tla (see checkInvariants). It is for tests,
// stress runs and fuzzing, not for serving: it takes the table lock and
// then every job's lock, and it is exact only while no Submit is in flight.
func (t *Table[Req, Res]) CheckInvariants() error { return t.checkInvariants() }

// checkInvariants states the table's contract as code. Each clause carries
// the name of the invariant of spec/JobTable.tla that it mirrors.
//
// It takes the table lock, which makes it the one writer of the id map and
// so lets it see the whole map and the retention list at one moment, and
// then each job's lock in turn (table, then job), so it may run at any
// time and sees each job between two transitions. DepthInv is exact only
// when no Submit is between its CAS and its insertion, so callers run it
// when no operation is in flight.
//
// Beyond the spec's invariants it checks the structures that implement
// them: the retention ring's own invariants (retentionList.check) and the
// id map's (jobIndex.check) under RetentionListInv and TypeInv, and that
// each job's snapshot fields, which readers of a terminal job read without
// its lock, agree with the atomic state under PayloadConsistencyInv.
func (t *Table[Req, Res]) checkInvariants() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	fail := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}

	depth := int(t.depth.Load())
	if limit := max(t.cfg.MaxQueue, 0); depth < 0 || depth > limit {
		fail("DepthBoundInv", "depth %d outside [0, %d]", depth, limit)
	}

	// Walk the retention list: terminal jobs of the map, each once, in
	// completion order.
	if err := t.retained.check(); err != nil {
		fail("RetentionListInv", "%v", err)
	}
	onList := make(map[*job[Req, Res]]bool, t.retained.len())
	var prev *job[Req, Res]
	for j := range t.retained.all() {
		id := j.id
		if onList[j] {
			fail("RetentionListInv", "job %s: listed twice", id)
			continue
		}
		onList[j] = true
		if t.jobs.lookup(id) != j {
			fail("RetentionListInv", "job %s: listed but not in the map", id)
		}
		if !j.loadState().Terminal() {
			fail("NoEvictNonTerminalInv", "job %s: %s job on the retention list", id, j.loadState())
			continue // its completion time is not frozen
		}
		if prev != nil && completedLocked(j).Before(completedLocked(prev)) {
			fail("RetentionListInv", "job %s completed before job %s, listed after it", id, prev.id)
		}
		prev = j
	}

	// The id map: its own invariants, then each job it holds.
	for _, err := range t.jobs.check() {
		fail("TypeInv", "%v", err)
	}
	live := 0
	for j := range t.jobs.all() {
		id := j.id
		if t.jobs.lookup(id) != j {
			fail("TypeInv", "job %s held but not found under its id", id)
		}
		j.mu.Lock()
		s := j.loadState()
		v := j.snapshotLocked()
		if !s.Terminal() {
			live++
		}
		if !s.Valid() {
			fail("TypeInv", "job %s: state %d is no State", id, int32(s))
		}
		if s.Terminal() != onList[j] {
			fail("RetentionListInv", "job %s: %s, listed = %t", id, s, onList[j])
		}
		if s.Terminal() == v.CompletedAt.IsZero() {
			fail("PayloadConsistencyInv", "job %s: %s with completedAt %v", id, s, v.CompletedAt)
		}
		if (s == ledgertype.Failed || s == ledgertype.TimedOut) != (v.Err != nil) {
			fail("PayloadConsistencyInv", "job %s: %s with error %v", id, s, v.Err)
		}
		if s == ledgertype.Running && v.StartedAt.IsZero() {
			fail("PayloadConsistencyInv", "job %s: RUNNING without startedAt", id)
		}
		if !v.StartedAt.IsZero() && v.StartedAt.Before(v.CreatedAt) {
			fail("TimestampOrderInv", "job %s: started %v before created %v", id, v.StartedAt, v.CreatedAt)
		}
		if !v.CompletedAt.IsZero() && v.CompletedAt.Before(v.CreatedAt) {
			fail("TimestampOrderInv", "job %s: completed %v before created %v", id, v.CompletedAt, v.CreatedAt)
		}
		if !v.StartedAt.IsZero() && !v.CompletedAt.IsZero() && v.CompletedAt.Before(v.StartedAt) {
			fail("TimestampOrderInv", "job %s: completed %v before started %v", id, v.CompletedAt, v.StartedAt)
		}
		if s.Terminal() && !j.reqReleased {
			fail("TerminalReleasesRequestInv", "job %s: %s still holds its request", id, s)
		}
		if j.reqReleased && !reflect.ValueOf(&j.req).Elem().IsZero() {
			fail("RequestReleasedInv", "job %s: request released but still referenced", id)
		}
		if j.done != nil {
			closed := false
			select {
			case <-j.done:
				closed = true
			default:
			}
			if closed != s.Terminal() {
				fail("NoLostWakeupInv", "job %s: %s with wakeup closed = %t", id, s, closed)
			}
		}
		j.mu.Unlock()
	}
	if depth != live {
		fail("DepthInv", "depth %d, non-terminal jobs %d", depth, live)
	}

	// TenantDepthInv: each tenant's counts are its live jobs and its jobs
	// in the table, every job points to its tenant's record, and the table
	// keeps records only of the tenants of its jobs.
	liveOf, heldOf := map[string]int{}, map[string]int{}
	for j := range t.jobs.all() {
		name := j.tenantName()
		heldOf[name]++
		if !j.loadState().Terminal() {
			liveOf[name]++
		}
		if t.tenants[name] != j.tn {
			fail("TenantDepthInv", "job %s: counted in a record the table does not hold", j.id)
		}
	}
	for name, rec := range t.tenants {
		if rec.live != liveOf[name] || rec.held != heldOf[name] || rec.held <= 0 {
			fail("TenantDepthInv", "tenant %q: counts %d live, %d held; the table has %d live, %d held",
				name, rec.live, rec.held, liveOf[name], heldOf[name])
		}
	}
	if len(heldOf) != len(t.tenants) {
		fail("TenantDepthInv", "jobs of %d tenants, %d records", len(heldOf), len(t.tenants))
	}

	// ListOrderInv: the admission order that List walks holds exactly the
	// retained jobs, each once, where its pos says, by ascending ordinal.
	for _, err := range t.order.check(func(j *job[Req, Res]) uint32 { return j.pos }) {
		fail("ListOrderInv", "%v", err)
	}
	if n := t.order.live(); n != t.jobs.live {
		fail("ListOrderInv", "%d jobs in the admission order, %d in the map", n, t.jobs.live)
	}
	for i := range t.order.len() {
		if j := t.order.at(i); j != nil && t.jobs.lookup(j.id) != j {
			fail("ListOrderInv", "job %s in the admission order, not in the map", j.id)
		}
	}

	// KeyInv: at most one retained job per idempotency key, and the index
	// names exactly the retained jobs that hold a key.
	keyed := 0
	for j := range t.jobs.all() {
		if !j.keyed {
			continue
		}
		keyed++
		k, ok := t.keyOf[j]
		if !ok || t.keys[keyOwner{j.tenantName(), k}].job != j {
			fail("KeyInv", "job %s holds a key (%q), which the index does not give it", j.id, k)
		}
	}
	for k, h := range t.keys {
		if !h.job.keyed || t.keyOf[h.job] != k.key || h.job.tenantName() != k.tenant || t.jobs.lookup(h.job.id) != h.job {
			fail("KeyInv", "key %q names job %s, which is not retained under it", k, h.job.id)
		}
	}
	if keyed != len(t.keys) || keyed != len(t.keyOf) {
		fail("KeyInv", "%d jobs hold a key, the index has %d keys and %d keyed jobs", keyed, len(t.keys), len(t.keyOf))
	}
	return errors.Join(errs...)
}
