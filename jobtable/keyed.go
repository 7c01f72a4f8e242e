package jobtable

// Idempotency keys (the IETF httpapi Idempotency-Key draft): a submit
// under a key creates a job only if no retained job holds the key. The
// check of the key, the admission and the insertion are one critical
// section under the table lock, so two submits with one new key create
// exactly one job; a key leaves the index with its job's eviction
// (evictFrontLocked), so a key is held exactly while its job is retained.
//
// The key and the digest live in the table's two maps (keys, keyOf), not
// in the job: a job without a key, the most, pays nothing for them, and a
// keyed one pays its two map entries.

// keyHolder is what the key index keeps for a key: the retained job that
// holds it and the digest of the request it was submitted with.
type keyHolder[Req, Res any] struct {
	job    *job[Req, Res]
	digest string
}

// LookupKey returns the id of the retained job that holds key, and the
// digest it was submitted with, or ErrNotFound. It changes nothing: a
// replay answered from it costs a lookup, not an admission.
func (t *Table[Req, Res]) LookupKey(key string) (id, digest string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.keys[key]
	if !ok {
		return "", "", ErrNotFound
	}
	return h.job.id, h.digest, nil
}

// SubmitKeyed is Submit of req under the idempotency key s.Key (not
// empty), for a request whose digest (a fingerprint the caller computes,
// compared for equality only) is s.Digest. While a job submitted under the
// key is retained, it creates nothing and takes no slot: it returns that
// job's id and replayed true when the digest is the same, and
// ErrKeyConflict when it is not. Otherwise it is Submit, and the new job
// holds the key until it is evicted.
//
// Unlike Submit it admits under the table lock (the key must be checked
// and taken in the step that admits), and reads the clock and the id
// source there: a replay then costs neither an id nor an eviction pass.
//
// Spec actions (spec/IdempotencyKeys.tla): SubmitLock, SubmitCheck and
// SubmitInsert, one critical section; in JobTable.tla, Submit's.
func (t *Table[Req, Res]) SubmitKeyed(s Submission, req Req) (id string, replayed bool, err error) {
	key, digest, taskID := s.Key, s.Digest, s.TaskID
	if key == "" {
		panic("jobtable: SubmitKeyed with an empty key")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if h, ok := t.keys[key]; ok {
		if h.digest != digest {
			traceKeyed(key, h.job.id, ErrKeyConflict)
			return "", false, ErrKeyConflict
		}
		traceKeyed(key, h.job.id, nil)
		return h.job.id, true, nil
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
	j := &job[Req, Res]{id: id, taskID: taskID, createdAt: now, req: req, keyed: true}
	traceAtomic() // eviction and insertion, one step of the trace
	t.evictLocked(now)
	t.insertLocked(j)
	if t.keys == nil {
		t.keys = make(map[string]keyHolder[Req, Res])
		t.keyOf = make(map[*job[Req, Res]]string)
	}
	t.keys[key] = keyHolder[Req, Res]{job: j, digest: digest}
	t.keyOf[j] = key
	inserted = true
	traceKeyedInsert(t, id, key)
	return id, false, nil
}

// forgetKeyLocked removes the key of the keyed job j from the key index,
// as j is evicted.
// t.mu must be held.
func (t *Table[Req, Res]) forgetKeyLocked(j *job[Req, Res]) {
	delete(t.keys, t.keyOf[j])
	delete(t.keyOf, j)
}
