package jobtable

import "time"

// Retention keeps terminal jobs so that their outcome can still be read, and
// bounds them lazily: Submit evicts, nothing else does and no goroutine runs
// in the background. Terminal jobs sit in an intrusive list in the order they
// completed; each is evicted once, from the front, so eviction is amortised
// O(1) per Submit whatever the number of retained jobs.

// retainLocked appends the newly terminal job j to the retention list.
// t.mu must be held.
func (t *Table[Req, Res]) retainLocked(j *job[Req, Res]) {
	j.prev, j.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = j
	} else {
		t.head = j
	}
	t.tail = j
	t.retained++
}

// unlinkLocked removes j from the retention list.
// t.mu must be held and j must be on the list.
func (t *Table[Req, Res]) unlinkLocked(j *job[Req, Res]) {
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		t.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		t.tail = j.prev
	}
	j.prev, j.next = nil, nil
	t.retained--
}

// evictFrontLocked removes the least recently completed job from the table.
// t.mu must be held and the retention list must not be empty.
func (t *Table[Req, Res]) evictFrontLocked() {
	j := t.head
	t.unlinkLocked(j)
	delete(t.jobs, j.id)
}

// evictLocked evicts terminal jobs whose JobTTL has passed at now, then the
// least recently completed beyond MaxCompleted. Only jobs on the retention
// list are candidates, and only terminal jobs are ever put there, so a
// non-terminal job is never evicted.
// t.mu must be held; it takes each candidate's mu (table, then job).
//
// Spec: the operator EvictLocked, inside the action SubmitInsert.
func (t *Table[Req, Res]) evictLocked(now time.Time) {
	if ttl := t.cfg.JobTTL; ttl > 0 {
		for t.head != nil && t.expired(t.head, now, ttl) {
			t.evictFrontLocked()
			t.evictedTTL.Add(1)
		}
	}
	if limit := t.cfg.MaxCompleted; limit > 0 {
		for t.retained > limit {
			t.evictFrontLocked()
			t.evictedLRU.Add(1)
		}
	}
}

// expired reports whether the terminal job j completed at least ttl before
// now. It reads completedAt under j.mu, as every payload field is read.
func (t *Table[Req, Res]) expired(j *job[Req, Res], now time.Time, ttl time.Duration) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return now.Sub(j.completedAt) >= ttl
}
