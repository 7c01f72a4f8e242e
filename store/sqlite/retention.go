package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/jobledger/jobledger/ledger"
)

// Retention is jobtable's, on rows: Submit evicts, nothing else does (but
// Open, which runs one pass, see recoverDatabase), and no goroutine runs in
// the background. The terminal jobs are ordered by seq, their completion
// order, and each pass evicts a prefix of that order: first the jobs
// completed at least JobTTL ago, then the least recently completed beyond
// MaxCompleted. Completion times never decrease along seq (the writer's
// clock never goes back, view.tick), so "completed at least JobTTL ago"
// is a prefix, and it is found through the index jobs_retention without
// reading the rows. A job that is not terminal has no seq and is never a
// candidate.
//
// Two things keep a pass cheap, as it runs in every Submit:
//
//   - The view keeps a lower bound of the oldest terminal job's completion
//     time (view.front): while it is after the TTL's cutoff nothing can
//     have expired, and the pass reads nothing. It is exact after a TTL
//     pass and stays a lower bound as jobs leave the front.
//   - The LRU bound is counted in the view, from the number of terminal
//     jobs, and its evictions are deleted once per batch, in one statement
//     before the commit (flushEvictions), not once per Submit. The jobs
//     deleted are the same: every pass takes the front of the completion
//     order, and a job that ends joins at the back. A write later in the
//     batch that names a job whose deletion is pending finds it still
//     there, terminal, and is refused with ErrNotPending or ErrTerminal
//     rather than ErrNotFound: the writes of one batch are all in flight
//     together, so that answer is the one it gets ordered just before the
//     Submit that evicted the job, and a refusal changes nothing. A TTL
//     pass that reads the file deletes the pending evictions first.

// evict runs one retention pass at now inside t, counting in v.
func evict(t *txq, cfg *ledger.Config, v *view, now int64) error {
	if ttl := cfg.JobTTL; ttl > 0 && v.retained > 0 {
		if cutoff := now - ttl.Nanoseconds(); v.front <= cutoff {
			// The LRU evictions counted so far go first: they are
			// the front that this pass reads.
			if err := flushEvictions(t, v); err != nil {
				return err
			}
			n, front, err := evictExpired(t, cutoff)
			if err != nil {
				return fmt.Errorf("sqlite: TTL eviction: %w", err)
			}
			v.front = front
			v.evictedTTL += uint64(n)
			v.retained -= n
			v.jobs -= n
		}
	}
	if limit := cfg.MaxCompleted; limit > 0 && v.retained > limit {
		n := v.retained - limit
		v.lruDue += n
		v.evictedLRU += uint64(n)
		v.retained -= n
		v.jobs -= n
	}
	return nil
}

// evictExpired deletes the terminal jobs completed at or before cutoff and
// returns how many, and the completion time of the oldest one left (or,
// if none is left, cutoff+1: every later completion is after it).
func evictExpired(t *txq, cutoff int64) (int, int64, error) {
	bound, front := int64(math.MaxInt64), cutoff+1 // every terminal job expired
	if err := t.queryRow(qTTLBound, cutoff).Scan(&bound, &front); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, err
	}
	res, err := t.exec(qEvictBelow, bound)
	if err != nil {
		return 0, 0, err
	}
	n, err := res.RowsAffected()
	return int(n), front, err
}

// flushEvictions deletes the LRU evictions that the batch's passes
// counted, the oldest v.lruDue terminal jobs.
func flushEvictions(t *txq, v *view) error {
	if v.lruDue == 0 {
		return nil
	}
	res, err := t.exec(qEvictOldest, v.lruDue)
	if err != nil {
		return fmt.Errorf("sqlite: LRU eviction: %w", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(v.lruDue) {
		return fmt.Errorf("sqlite: LRU eviction removed %d jobs, not %d: %v", got, v.lruDue, err)
	}
	v.lruDue = 0
	return nil
}
