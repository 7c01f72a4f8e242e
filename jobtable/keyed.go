package jobtable

// Idempotency keys (the IETF httpapi Idempotency-Key draft): a submit
// under a key creates a job only if no retained job holds the key. The
// check of the key, the admission and the insertion are one critical
// section under the table lock, so two submits with one new key create
// exactly one job; a key leaves the index with its job's eviction
// (evictFrontLocked), so a key is held exactly while its job is retained.

// LookupKey returns the id of the retained job that holds key, and the
// digest it was submitted with, or ErrNotFound. It changes nothing: a
// replay answered from it costs a lookup, not an admission.
func (t *Table[Req, Res]) LookupKey(key string) (id, digest string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, ok := t.keys[key]
	if !ok {
		return "", "", ErrNotFound
	}
	return j.view.ID, j.digest, nil
}

// SubmitKeyed is Submit under the idempotency key key (not empty), for a
// request whose digest (a fingerprint the caller computes, compared for
// equality only) is digest. While a job submitted under key is retained,
// it creates nothing and takes no slot: it returns that job's id and
// replayed true when digest is the same, and ErrKeyConflict when it is
// not. Otherwise it is Submit, and the new job holds the key until it is
// evicted.
//
// Unlike Submit it admits under the table lock (the key must be checked
// and taken in the step that admits), and reads the clock and the id
// source there: a replay then costs neither an id nor an eviction pass.
//
// Spec actions (spec/IdempotencyKeys.tla): SubmitLock, SubmitCheck and
// SubmitInsert, one critical section; in JobTable.tla, Submit's.
func (t *Table[Req, Res]) SubmitKeyed(key, digest, taskID string, req Req) (id string, replayed bool, err error) {
	if key == "" {
		panic("jobtable: SubmitKeyed with an empty key")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if j, ok := t.keys[key]; ok {
		if j.digest != digest {
			traceKeyed(key, j.view.ID, ErrKeyConflict)
			return "", false, ErrKeyConflict
		}
		traceKeyed(key, j.view.ID, nil)
		return j.view.ID, true, nil
	}
	if !t.admit() {
		traceKeyed(key, "", ErrQueueFull)
		return "", false, ErrQueueFull
	}
	inserted := false
	defer func() {
		if !inserted {
			t.depth.Add(-1) // a panic below: undo the admission
		}
	}()
	now := t.cfg.Now()
	id = t.cfg.NewID()
	j := &job[Req, Res]{view: Snapshot{ID: id, TaskID: taskID, State: Pending, CreatedAt: now}, req: req,
		key: key, digest: digest}
	traceAtomic() // eviction and insertion, one step of the trace
	t.evictLocked(now)
	t.insertLocked(j)
	if t.keys == nil {
		t.keys = make(map[string]*job[Req, Res])
	}
	t.keys[key] = j
	inserted = true
	traceKeyedInsert(t, id, key)
	return id, false, nil
}
