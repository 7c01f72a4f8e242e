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

// evict runs one retention pass at now inside t, counting in v.
func evict(t *txq, cfg *ledger.Config, v *view, now int64) error {
	if ttl := cfg.JobTTL; ttl > 0 && v.retained > 0 {
		n, err := evictExpired(t, now-ttl.Nanoseconds())
		if err != nil {
			return fmt.Errorf("sqlite: TTL eviction: %w", err)
		}
		v.evictedTTL += uint64(n)
		v.retained -= n
		v.jobs -= n
	}
	if limit := cfg.MaxCompleted; limit > 0 && v.retained > limit {
		n := v.retained - limit
		res, err := t.exec(qEvictOldest, n)
		if err != nil {
			return fmt.Errorf("sqlite: LRU eviction: %w", err)
		}
		if got, err := res.RowsAffected(); err != nil || got != int64(n) {
			return fmt.Errorf("sqlite: LRU eviction removed %d jobs, not %d: %v", got, n, err)
		}
		v.evictedLRU += uint64(n)
		v.retained -= n
		v.jobs -= n
	}
	return nil
}

// evictExpired deletes the terminal jobs completed at or before cutoff and
// returns how many. The common case, nothing expired, costs one read of
// the index's first entry.
func evictExpired(t *txq, cutoff int64) (int, error) {
	var front int64
	switch err := t.queryRow(qFront).Scan(&front); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, err
	case front > cutoff:
		return 0, nil
	}
	bound := int64(math.MaxInt64) // every terminal job expired
	if err := t.queryRow(qTTLBound, cutoff).Scan(&bound); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	res, err := t.exec(qEvictBelow, bound)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
