package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/ledger"
)

// recoverDatabase is Open's one transaction: it migrates the schema, checks
// the stored commit count against the lock file's mark and the stored
// depth against the jobs, applies the restart semantics (see the package
// doc, "Restart") and runs one retention pass, then commits and writes the
// mark, and returns the writer's first view. It fills s.recovered and
// s.maxDepth.
func (s *Store) recoverDatabase(ctx context.Context) (view, error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return view{}, err
	}
	defer tx.Rollback()
	if err := migrate(ctx, tx); err != nil {
		return view{}, err
	}
	t := &txq{ctx: ctx, tx: tx}
	commits, err := loadCommits(ctx, tx)
	if err != nil {
		return view{}, err
	}
	if err := s.lock.checkMark(commits); err != nil {
		return view{}, err
	}
	depth, err := loadDepth(ctx, tx)
	if err != nil {
		return view{}, err
	}
	v := view{depth: depth, commits: commits + 1}
	err = tx.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM jobs),
			(SELECT count(*) FROM jobs WHERE seq IS NOT NULL),
			(SELECT coalesce(max(seq), 0) + 1 FROM jobs WHERE seq IS NOT NULL),
			(SELECT value FROM meta WHERE key = 'next_n'),
			max((SELECT coalesce(max(completed_at), 0) FROM jobs WHERE seq IS NOT NULL),
			    (SELECT coalesce(max(max(created_at, coalesce(started_at, 0))), 0) FROM jobs WHERE seq IS NULL))`,
	).Scan(&v.jobs, &v.retained, &v.nextSeq, &v.nextN, &v.clock)
	if err != nil {
		return view{}, fmt.Errorf("sqlite: counting the jobs: %w", err)
	}
	now := v.tick(s.cfg.Now())
	if err := failRunning(t, &v, now); err != nil {
		return view{}, err
	}
	if err := evict(t, &s.cfg, &v, now); err != nil {
		return view{}, err
	}
	if err := flushEvictions(t, &v); err != nil {
		return view{}, err
	}
	if _, err := t.exec(qSetDepth, v.depth); err != nil {
		return view{}, err
	}
	if _, err := t.exec(qSetCommits, v.commits); err != nil {
		return view{}, err
	}
	if s.recovered, err = pendingJobs(ctx, t); err != nil {
		return view{}, err
	}
	if err := tx.Commit(); err != nil {
		return view{}, fmt.Errorf("sqlite: committing the restart: %w", err)
	}
	s.lock.writeMark(v.commits) // a mark left lower only checks less (mark.go)
	traceOpened(s, &v, now)
	s.maxDepth = max(s.cfg.MaxQueue, 0, v.depth)
	return v, nil
}

// loadDepth reads the stored depth and checks it against the jobs that are
// not terminal: a disagreement means the file was changed behind the
// store's back, and the admission bound cannot be trusted
// (ErrDepthMismatch).
func loadDepth(ctx context.Context, tx *sql.Tx) (int, error) {
	var stored, live int
	err := tx.QueryRowContext(ctx, `SELECT
			(SELECT value FROM meta WHERE key = 'depth'),
			(SELECT count(*) FROM jobs WHERE seq IS NULL)`).Scan(&stored, &live)
	if err != nil {
		return 0, fmt.Errorf("sqlite: reading the depth: %w", err)
	}
	if stored != live {
		return 0, fmt.Errorf("%w: stored depth %d, %d jobs not terminal", ErrDepthMismatch, stored, live)
	}
	return stored, nil
}

// loadCommits reads the stored count of committed transactions.
func loadCommits(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'commits'`).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("%w: meta holds no commit count", ErrCorrupt)
	case err != nil:
		return 0, fmt.Errorf("sqlite: reading the commit count: %w", err)
	}
	return n, nil
}

// failRunning ends every RUNNING job FAILED with InterruptedByRestart: its
// runner died with the process that ran it, and nothing can tell how far
// it got. They get completion seqs in the order they started.
func failRunning(t *txq, v *view, now int64) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT id FROM jobs WHERE seq IS NULL AND state = 1
		ORDER BY started_at, rowid`)
	if err != nil {
		return fmt.Errorf("sqlite: finding RUNNING jobs: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	traceFailedRunning(ids)
	cause := InterruptedByRestart
	for _, id := range ids {
		o := &op{kind: opFail, id: id, cause: &cause}
		if _, ended, err := applyEnd(t, v, o, now); err != nil || !ended {
			return fmt.Errorf("sqlite: failing RUNNING job %s: ended %t: %v", id, ended, err)
		}
	}
	return nil
}

// pendingJobs lists the PENDING jobs, oldest first.
func pendingJobs(ctx context.Context, t *txq) ([]ledger.Snapshot, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+snapCols+` FROM jobs WHERE seq IS NULL AND state = 0
		ORDER BY created_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing PENDING jobs: %w", err)
	}
	defer rows.Close()
	var snaps []ledger.Snapshot
	for rows.Next() {
		snap, err := scanSnapshot(rows)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap)
	}
	return snaps, rows.Err()
}
