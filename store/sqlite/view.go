package sqlite

import (
	"sync/atomic"
	"time"
)

// view is the writer's picture of the database: the counts it keeps in
// memory so that admission and retention need no COUNT query. The writer
// goroutine owns it: it applies a batch to a copy and keeps the copy only
// if the batch commits, so that after a failed commit the view is again
// what the database holds (see commitBatch).
//
// Invariants, while no batch is being applied (DepthInv, CountersInv):
//   - depth is the number of jobs not terminal, and meta's stored depth;
//   - jobs is the number of rows, retained the number of terminal ones;
//   - nextSeq is above every stored seq;
//   - nextN is meta's stored next_n, above every job's admission ordinal n;
//   - commits is meta's stored commits (mark.go);
//   - clock is at or above every time stored;
//   - front is at or before the completion time of every terminal job
//     (retention.go);
//   - lruDue is 0: the evictions a batch counts are deleted before its
//     commit (the terminal jobs of the file are retained plus lruDue while
//     a batch is applied).
type view struct {
	depth, jobs, retained  int
	evictedTTL, evictedLRU uint64
	nextSeq                int64
	nextN                  int64 // the admission ordinal of the next job
	commits                int64 // the transactions committed to the file
	clock                  int64 // Unix ns: the latest time stored
	front                  int64 // Unix ns: at or before the oldest terminal job's completion
	lruDue                 int   // LRU evictions counted, not yet deleted: 0 between batches
}

// tick returns the time of a batch: now, or the latest time already stored
// if the clock reads earlier, so that the store's times never go back. It
// advances v.clock.
func (v *view) tick(now time.Time) int64 {
	v.clock = max(v.clock, now.UnixNano())
	return v.clock
}

// published is the last committed view, for readers outside the writer:
// Stats and CheckInvariants. The writer stores every field after each
// commit; a reader loads them one at a time, so they agree with each other
// only while no batch commits.
type published struct {
	depth, jobs, retained  atomic.Int64
	evictedTTL, evictedLRU atomic.Uint64
	commits, writes        atomic.Uint64
}

// store publishes v.
func (p *published) store(v view) {
	p.depth.Store(int64(v.depth))
	p.jobs.Store(int64(v.jobs))
	p.retained.Store(int64(v.retained))
	p.evictedTTL.Store(v.evictedTTL)
	p.evictedLRU.Store(v.evictedLRU)
}
