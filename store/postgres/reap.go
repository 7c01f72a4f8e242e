package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// WorkerLost is the error message of a job whose lease lapsed: the
// replica that ran it (or had taken its request) stopped renewing it,
// having died or lost the database, and another replica's reaper ended it
// FAILED.
const WorkerLost = "worker lost"

// reap ends FAILED, with WorkerLost, every live job whose lease lapsed
// before now, but those this Store holds (held.go), and returns how many
// it ended: another replica's, or one of this replica's that nobody here
// runs (its Claim's reply was lost, its ends all failed). Each end
// is the one of write.go (the ledger row locked first, the state guard,
// the next seq, the decrement and pg_notify), all in one transaction.
//
// The candidates' rows are locked (FOR UPDATE) after the ledger row and
// re-checked against the latest commit, so a renewal that committed first
// saves its job, and one that comes later waits and then finds the job
// ended. The rows are locked in the order of their ids, as renew locks
// them, so the two never deadlock. A Store never reaps the jobs it holds: it is
// alive, since it is reaping, and its keeper renews them (its replica's
// jobs of an earlier life are Open's to end). A first read, without
// locks, skips the transaction when nothing lapsed, so replicas with
// nothing to reap do not queue on the ledger row.
func (s *Store) reap(ctx context.Context) (int, error) {
	now := s.now()
	held := heldIDs(s.heldNow())
	var lapsed bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs
		WHERE lease_until < coalesce($1, `+dbNow+`) AND NOT (owner = $2 AND id = ANY($3)))`,
		now, s.opts.Replica, held).Scan(&lapsed); err != nil {
		return 0, s.callErr(ctx, "looking for lapsed leases", err)
	}
	if !lapsed {
		return 0, nil
	}
	var (
		reaped []string
		stamp  *traceStamp
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT next_seq FROM ledger WHERE id = 1 FOR UPDATE`).Scan(&seq); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id FROM jobs
			WHERE seq IS NULL AND lease_until < coalesce($1, `+dbNow+`) AND NOT (owner = $2 AND id = ANY($3))
			ORDER BY id FOR UPDATE`, now, s.opts.Replica, held)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		msg := WorkerLost
		for i, id := range ids {
			final, err := endJob(ctx, tx, id, ledgertype.Failed, nil, &msg, now, seq+int64(i))
			if err != nil {
				return fmt.Errorf("ending job %s: %w", id, err)
			}
			if err := endBookkeeping(ctx, tx, final, seq+int64(i)); err != nil {
				return fmt.Errorf("ending job %s: %w", id, err)
			}
		}
		reaped = ids
		stamp, err = traceTx(ctx, tx)
		return err
	})
	if err != nil {
		return 0, s.callErr(ctx, "reaping lapsed leases", err)
	}
	s.traceReaped(stamp, reaped, now)
	return len(reaped), nil
}
