package jobtable

// Listing: the retained jobs, newest first by admission, a page at a time.
// Every job gets an ordinal when it is admitted (its insertion, under the
// table lock), and a page is the jobs whose ordinals lie below the cursor,
// highest first; the next cursor is the lowest ordinal the page looked at.
// An ordinal never changes and is never reused, so a walk lists no job
// twice, and lists every job retained (and matching) for the whole walk,
// whatever is admitted or evicted between its pages: the pages read
// disjoint ranges of ordinals that together cover every ordinal below the
// first cursor (spec/Listing.tla).

// Limits of a page.
const (
	// DefaultListLimit is the page size of a ListQuery whose Limit is 0.
	DefaultListLimit = 20
	// MaxListLimit caps ListQuery.Limit: a larger limit lists this many.
	MaxListLimit = 100
	// listScanBudget bounds the jobs one page looks at, so that a filter
	// that few jobs match does not hold the table lock over every retained
	// job: past it the page ends short, and its cursor resumes the walk.
	listScanBudget = 1024
)

// ListQuery selects a page of List. The zero value lists the newest
// DefaultListLimit jobs in any state.
type ListQuery struct {
	// ByState keeps only the jobs whose snapshot is in State.
	ByState bool
	State   State
	// ByTaskID keeps only the jobs submitted with TaskID: the empty
	// string keeps those submitted without one. TaskID without ByTaskID is
	// ErrBadQuery.
	ByTaskID bool
	TaskID   string
	// ByTenant keeps only the jobs of Tenant: a scoped List.
	ByTenant bool
	Tenant   string
	// Limit is the most jobs the page holds: 0 means DefaultListLimit,
	// more than MaxListLimit means MaxListLimit; negative is ErrBadQuery.
	Limit int
	// Before is the cursor: only jobs admitted before the job of that
	// ordinal are listed. 0 starts at the newest job.
	Before uint64

	_ struct{} // forbid positional literals
}

// Normalized returns q with its Limit resolved (the default, the cap), or
// ErrBadQuery for a negative Limit, a State that is none, or a TaskID
// without ByTaskID.
func (q ListQuery) Normalized() (ListQuery, error) {
	if q.Limit < 0 || (q.ByState && !q.State.Valid()) || (!q.ByTaskID && q.TaskID != "") {
		return ListQuery{}, ErrBadQuery
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultListLimit
	case q.Limit > MaxListLimit:
		q.Limit = MaxListLimit
	}
	return q, nil
}

// Matches reports whether a job with snapshot s is one q lists.
func (q ListQuery) Matches(s Snapshot) bool {
	return (!q.ByState || s.State == q.State) && (!q.ByTaskID || s.TaskID == q.TaskID) &&
		(!q.ByTenant || s.Tenant == q.Tenant)
}

// List returns a page of the retained jobs that q selects, newest first by
// admission, each as Snapshot would have returned it at the moment of the
// call, and the cursor of the next page: pass it as q.Before. next is 0
// when the walk is over. A page holds at most q.Limit jobs, and may hold
// fewer, even none, while next is not 0: a page looks at no more than a
// bounded number of jobs (filters that few jobs match). A walk of pages
// lists no job twice, and lists every job that was retained and matched q
// throughout the walk.
//
// It holds the table lock for the page (so a page is one moment of the
// table), and takes the lock of each live job it lists (table, then job).
//
// Spec action: Page (spec/Listing.tla), a walk's StartWalk with it when
// q.Before is 0.
func (t *Table[Req, Res]) List(q ListQuery) (jobs []Snapshot, next uint64, err error) {
	q, err = q.Normalized()
	if err != nil {
		return nil, 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	jobs, next, err = t.listLocked(q)
	traceList(t, q, jobs, next)
	return jobs, next, err
}

// listLocked is List on a normalized query.
// t.mu must be held.
func (t *Table[Req, Res]) listLocked(q ListQuery) ([]Snapshot, uint64, error) {
	jobs := make([]Snapshot, 0, min(q.Limit, t.order.live()))
	pos := t.order.below(q.Before)
	var last *job[Req, Res] // the last job scanned
	for scanned := 0; pos >= 0 && scanned < listScanBudget; pos-- {
		j := t.order.at(pos)
		if j == nil {
			continue
		}
		scanned++
		last = j
		if !q.ByState || j.loadState() == q.State || !j.loadState().Terminal() {
			if s := j.listSnapshot(); q.Matches(s) {
				jobs = append(jobs, s)
			}
		}
		if len(jobs) == q.Limit {
			return jobs, t.nextCursorLocked(pos, j.ord), nil
		}
	}
	if pos < 0 {
		return jobs, 0, nil
	}
	// The scan budget ran out with older jobs left: the next page starts
	// below the last job scanned.
	return jobs, last.ord, nil
}

// nextCursorLocked is the cursor after a full page that ended at the slot
// of index pos, of ordinal ord: 0 when the order holds nothing older (the
// entry at index 0 is never empty), so that a walk to the oldest job ends
// without an empty last page.
// t.mu must be held.
func (t *Table[Req, Res]) nextCursorLocked(pos int, ord uint64) uint64 {
	if pos == 0 {
		return 0
	}
	return ord
}

// listSnapshot is snapshot without the trace: List is no action of
// spec/JobTable.tla (its page is Listing.tla's, logged whole by traceList).
func (j *job[Req, Res]) listSnapshot() Snapshot {
	if snap, ok := j.final(); ok {
		return snap
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snapshotLocked()
}
