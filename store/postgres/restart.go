package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// recoverDatabase is Open's one transaction, under the advisory lock
// migrationLock: it migrates the schema, checks the stored depth, applies
// the restart (the package doc) and runs one
// retention pass, then commits. It fills s.recovered and s.maxDepth, and
// returns the last completion seq before its own ends: every later end
// commits after the listener LISTENs, and is notified to it. The
// restart ends and releases only the jobs of this Store's replica name.
func (s *Store) recoverDatabase(ctx context.Context) (int64, error) {
	var depth int
	var seen int64
	var ttl, lru uint64
	var (
		now    *int64
		failed []string
		stamp  *traceStamp
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("postgres: taking the migration lock: %w", err)
		}
		if err := migrate(ctx, tx); err != nil {
			return err
		}
		var seq, live int64
		// Lock the ledger row first, then count in a later statement: under
		// READ COMMITTED a statement's subquery reads the snapshot taken
		// when the statement began, before the lock was granted, so a count
		// beside the FOR UPDATE misses the ends other replicas committed
		// while this one waited.
		if err := tx.QueryRow(ctx, `SELECT depth, next_seq FROM ledger WHERE id = 1 FOR UPDATE`).Scan(&depth, &seq); err != nil {
			return fmt.Errorf("postgres: reading the ledger: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE seq IS NULL`).Scan(&live); err != nil {
			return fmt.Errorf("postgres: counting the live jobs: %w", err)
		}
		seen = seq - 1
		if int64(depth) != live {
			return fmt.Errorf("%w: depth %d, %d jobs not terminal", ErrDepthMismatch, depth, live)
		}
		now = s.now()
		var err error
		if failed, err = failRunning(ctx, tx, now, seq, s.opts.Replica); err != nil {
			return err
		}
		depth -= len(failed)
		tag, err := tx.Exec(ctx, `UPDATE jobs SET taken = false, lease_until = NULL
			WHERE seq IS NULL AND state = 0 AND taken AND coalesce(owner, $1) = $1`, s.opts.Replica)
		if err != nil {
			return fmt.Errorf("postgres: releasing the marks of PENDING jobs: %w", err)
		}
		if tag.RowsAffected() > 0 {
			// Jobs claimable again: other replicas' claimers may run them.
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, workChannel); err != nil {
				return fmt.Errorf("postgres: notifying the released jobs: %w", err)
			}
		}
		if ttl, lru, err = s.evict(ctx, tx, now); err != nil {
			return err
		}
		if s.recovered, err = pendingJobs(ctx, tx); err != nil {
			return err
		}
		stamp, err = traceTx(ctx, tx)
		return err
	})
	if err != nil {
		var pgErr interface{ SQLState() string }
		if errors.As(err, &pgErr) || errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrForeign) || errors.Is(err, ErrDepthMismatch) {
			return 0, err
		}
		return 0, fmt.Errorf("postgres: opening the ledger: %w", err)
	}
	s.traceOpened(stamp, failed, now)
	s.evictedTTL.Add(ttl)
	s.evictedLRU.Add(lru)
	s.maxDepth = max(s.cfg.MaxQueue, 0, depth)
	return seen, nil
}

// failRunning ends every RUNNING job of replica (or of no owner: started
// before leases) FAILED with InterruptedByRestart, in the order they
// started, each with the next completion seq from seq on, the depth
// decremented and a notification, as an end does. It returns the jobs it
// ended, in that order. The jobs of other replicas are left to their leases.
func failRunning(ctx context.Context, tx pgx.Tx, now *int64, seq int64, replica string) ([]string, error) {
	// The rows are locked in the order of their ids, as renewal and the
	// reaper lock them, so that a live Store of the same name renewing
	// them cannot deadlock with this; they end in the order they started.
	rows, err := tx.Query(ctx, `SELECT id FROM (
			SELECT id, started_at, n FROM jobs WHERE state = 1 AND coalesce(owner, $1) = $1
			ORDER BY id FOR UPDATE) mine
		ORDER BY started_at, n`, replica)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing RUNNING jobs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: listing RUNNING jobs: %w", err)
	}
	msg := InterruptedByRestart
	for i, id := range ids {
		final, err := endJob(ctx, tx, id, ledgertype.Failed, nil, &msg, now, seq+int64(i))
		if err != nil {
			return nil, fmt.Errorf("postgres: failing job %s: %w", id, err)
		}
		if err := endBookkeeping(ctx, tx, final, seq+int64(i)); err != nil {
			return nil, fmt.Errorf("postgres: failing job %s: %w", id, err)
		}
	}
	return ids, nil
}

// pendingJobs lists the PENDING jobs whose request nobody holds, oldest
// first: after the restart, every PENDING job but those other replicas
// took.
func pendingJobs(ctx context.Context, tx pgx.Tx) ([]ledger.Snapshot, error) {
	rows, err := tx.Query(ctx, `SELECT `+snapCols+` FROM jobs WHERE seq IS NULL AND state = 0 AND NOT taken
		ORDER BY created_at, n`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing PENDING jobs: %w", err)
	}
	snaps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Snapshot, error) { return scanSnapshot(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: listing PENDING jobs: %w", err)
	}
	return snaps, nil
}
