package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// recoverDatabase is Open's one transaction, under the advisory lock
// migrationLock: it migrates the schema, checks the stored depth, applies
// the restart semantics (see the package doc, "Restart") and runs one
// retention pass, then commits. It fills s.recovered and s.maxDepth.
func (s *Store) recoverDatabase(ctx context.Context) error {
	var depth int
	var ttl, lru uint64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("postgres: taking the migration lock: %w", err)
		}
		if err := migrate(ctx, tx); err != nil {
			return err
		}
		var seq, live int64
		if err := tx.QueryRow(ctx, `SELECT depth, next_seq, (SELECT count(*) FROM jobs WHERE seq IS NULL)
			FROM ledger WHERE id = 1 FOR UPDATE`).Scan(&depth, &seq, &live); err != nil {
			return fmt.Errorf("postgres: reading the ledger: %w", err)
		}
		if int64(depth) != live {
			return fmt.Errorf("%w: depth %d, %d jobs not terminal", ErrDepthMismatch, depth, live)
		}
		now := s.now()
		n, err := failRunning(ctx, tx, now, seq)
		if err != nil {
			return err
		}
		depth -= n
		if _, err := tx.Exec(ctx, `UPDATE jobs SET taken = false, lease_until = NULL WHERE seq IS NULL AND taken`); err != nil {
			return fmt.Errorf("postgres: releasing the marks of PENDING jobs: %w", err)
		}
		if ttl, lru, err = s.evict(ctx, tx, now); err != nil {
			return err
		}
		s.recovered, err = pendingJobs(ctx, tx)
		return err
	})
	if err != nil {
		var pgErr interface{ SQLState() string }
		if errors.As(err, &pgErr) || errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrForeign) || errors.Is(err, ErrDepthMismatch) {
			return err
		}
		return fmt.Errorf("postgres: opening the ledger: %w", err)
	}
	s.evictedTTL.Add(ttl)
	s.evictedLRU.Add(lru)
	s.maxDepth = max(s.cfg.MaxQueue, 0, depth)
	return nil
}

// failRunning ends every RUNNING job FAILED with InterruptedByRestart, in
// the order they started, each with the next completion seq from seq on,
// the depth decremented and a notification, as an end does. It returns
// how many it ended.
//
// This assumes that no other Store on the database is running jobs: a
// second replica's RUNNING jobs would be failed under it (its Finish would
// get ErrTerminal). Leases, which end only the jobs of a replica that
// stopped renewing them, are the multi-replica design (issue 13).
func failRunning(ctx context.Context, tx pgx.Tx, now *int64, seq int64) (int, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM jobs WHERE state = 1 ORDER BY started_at, n`)
	if err != nil {
		return 0, fmt.Errorf("postgres: listing RUNNING jobs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("postgres: listing RUNNING jobs: %w", err)
	}
	msg := InterruptedByRestart
	for i, id := range ids {
		final, err := endJob(ctx, tx, id, ledger.Failed, nil, &msg, now, seq+int64(i))
		if err != nil {
			return 0, fmt.Errorf("postgres: failing job %s: %w", id, err)
		}
		if err := endBookkeeping(ctx, tx, final); err != nil {
			return 0, fmt.Errorf("postgres: failing job %s: %w", id, err)
		}
	}
	return len(ids), nil
}

// pendingJobs lists the PENDING jobs, oldest first.
func pendingJobs(ctx context.Context, tx pgx.Tx) ([]ledger.Snapshot, error) {
	rows, err := tx.Query(ctx, `SELECT `+snapCols+` FROM jobs WHERE seq IS NULL AND state = 0 ORDER BY created_at, n`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing PENDING jobs: %w", err)
	}
	snaps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Snapshot, error) { return scanSnapshot(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: listing PENDING jobs: %w", err)
	}
	return snaps, nil
}
