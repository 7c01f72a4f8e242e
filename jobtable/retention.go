package jobtable

import "time"

// Retention keeps terminal jobs so that their outcome can still be read, and
// bounds them lazily: Submit evicts, nothing else does and no goroutine runs
// in the background. Terminal jobs sit in the table's retentionList in the
// order they completed; each is evicted once, from the front, so eviction
// is amortised O(1) per Submit whatever the number of retained jobs.

// retainLocked appends the newly terminal job j to the retention list.
// t.mu must be held.
func (t *Table[Req, Res]) retainLocked(j *job[Req, Res]) {
	t.retained.push(j)
}

// evictFrontLocked removes the least recently completed job from the table.
// t.mu must be held and the retention list must not be empty.
func (t *Table[Req, Res]) evictFrontLocked() {
	j := t.retained.popFront()
	t.jobs.removeLocked(j.id)
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
		for {
			j, ok := t.retained.front()
			if !ok || !t.expired(j, now, ttl) {
				break
			}
			t.evictFrontLocked()
			t.evictedTTL.Add(1)
		}
	}
	if limit := t.cfg.MaxCompleted; limit > 0 {
		for t.retained.len() > limit {
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
