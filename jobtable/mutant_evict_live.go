//go:build mutant_evict_live

package jobtable

import "time"

// Mutant: retention bounds the whole table, not the terminal jobs, and so
// evicts jobs that are still PENDING or RUNNING.
func (t *Table[Req, Res]) evictLocked(now time.Time) {
	limit := t.cfg.MaxCompleted
	if limit <= 0 {
		return
	}
	for id, j := range t.jobs {
		if len(t.jobs) <= limit {
			return
		}
		if j.loadState().Terminal() {
			t.unlinkLocked(j)
		}
		delete(t.jobs, id)
		t.evictedLRU.Add(1)
	}
}
