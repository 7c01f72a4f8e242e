package jobtable

// Tenants: every job belongs to the tenant that submitted it ("" for
// none). The table counts each tenant's live jobs beside depth, so that a
// submission may be bounded by its tenant's share of the queue as well as
// by MaxQueue. The count moves only under the table lock: a bounded
// admission checks the tenant's count, takes a slot of depth and counts
// the job in one critical section with the insertion, and the terminal
// transition, under the same lock, uncounts it. So no check is ever apart
// from its count (TenantBoundInv).

// tenant is the table's record of a tenant with jobs in the table, shared
// by its jobs: a job costs a pointer, not a copy of its tenant's name. name
// is immutable and read freely.
type tenant struct {
	name string
	live int // the tenant's admitted jobs that are not terminal; under Table.mu
	held int // the tenant's jobs in the table, terminal or not; under Table.mu
}

// tenantName is the name of the tenant of j, read without a lock.
func (j *job[Req, Res]) tenantName() string { return j.tn.name }

// tenantRoomLocked reports whether the tenant name has fewer than bound
// live jobs; a bound of zero or less is none.
// t.mu must be held.
func (t *Table[Req, Res]) tenantRoomLocked(name string, bound int) bool {
	if bound <= 0 {
		return true
	}
	rec := t.tenants[name]
	return rec == nil || rec.live < bound
}

// countLocked counts the new job j in its tenant's live jobs.
// t.mu must be held.
func (t *Table[Req, Res]) countLocked(j *job[Req, Res], name string) {
	rec := t.tenants[name]
	if rec == nil {
		if t.tenants == nil {
			t.tenants = make(map[string]*tenant)
		}
		rec = &tenant{name: name}
		t.tenants[name] = rec
	}
	rec.live++
	rec.held++
	j.tn = rec
}

// uncountLocked takes the job j, just terminal, out of its tenant's live
// jobs.
// t.mu must be held.
func (t *Table[Req, Res]) uncountLocked(j *job[Req, Res]) { j.tn.live-- }

// releaseLocked takes the job j, evicted, out of its tenant's jobs, and
// forgets a tenant left with none: the table keeps records only of the
// tenants of the jobs it holds.
// t.mu must be held.
func (t *Table[Req, Res]) releaseLocked(j *job[Req, Res]) {
	j.tn.held--
	if j.tn.held == 0 {
		delete(t.tenants, j.tn.name)
	}
}

// Tenant returns the tenant of the job with the given id, or false when the
// table holds no such job. A job's tenant never changes.
func (t *Table[Req, Res]) Tenant(id string) (string, bool) {
	j := t.jobs.lookup(id)
	if j == nil {
		return "", false
	}
	return j.tenantName(), true
}

// TenantDepth returns the number of tenant's admitted jobs that are not
// yet terminal.
func (t *Table[Req, Res]) TenantDepth(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec := t.tenants[name]; rec != nil {
		return rec.live
	}
	return 0
}
