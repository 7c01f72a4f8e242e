//go:build !mutant_evict_live

package jobtable

import "time"

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
