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
	traceEvict(t, j)
	t.jobs.removeLocked(j)
	t.order.remove(j.pos, j, setPos)
	if j.keyed {
		t.forgetKeyLocked(j) // the key goes with its job
	}
	t.releaseLocked(j)
}

// evictLocked evicts terminal jobs whose JobTTL has passed at now, then the
// least recently completed beyond MaxCompleted. Only jobs on the retention
// list are candidates, and only terminal jobs are ever put there, so a
// non-terminal job is never evicted.
// t.mu must be held.
//
// Spec: the operator EvictLocked, inside the action SubmitInsert.
func (t *Table[Req, Res]) evictLocked(now time.Time) {
	if ttl := t.cfg.JobTTL; ttl > 0 {
		for {
			j, ok := t.retained.front()
			if !ok || now.Sub(completedLocked(j)) < ttl {
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

// completedLocked returns the completion time of j, a job on the retention
// list, without taking j.mu. j is terminal, so its final snapshot is
// frozen, and it was put on the list under t.mu after its terminal
// critical section wrote that snapshot: holding t.mu orders this read
// after the write.
// t.mu must be held and j must be on the retention list.
func completedLocked[Req, Res any](j *job[Req, Res]) time.Time {
	return j.completedAt
}

// setPos records where j now sits in the admission order: the callback of
// its compaction, which runs under t.mu.
func setPos[Req, Res any](j *job[Req, Res], pos uint32) { j.pos = pos }
