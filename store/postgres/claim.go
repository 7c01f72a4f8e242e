package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// Claim takes the oldest PENDING job whose request nobody has taken, takes
// its request and starts it, under a lease of this replica, in one
// statement: ledger.ErrNoWork when there is none. It returns the snapshot
// Start would, and the request.
//
// The statement locks its candidate with FOR UPDATE SKIP LOCKED, so
// claimers on any replicas pass over each other's candidates instead of
// queueing behind them, and re-checks the candidate on the latest commit
// once locked (READ COMMITTED): a job another replica took, started or
// ended meanwhile is skipped, so each job is claimed at most once, and
// never one a reaper ended. It locks no ledger row: like Start, it
// changes one job row and not the depth.
func (s *Store) Claim(ctx context.Context) (ledger.Snapshot, []byte, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, nil, ledger.ErrClosed
	}
	var req []byte
	snap, err := scanSnapshot(rowWith(s.pool.QueryRow(ctx, `WITH c AS (
			SELECT id, request FROM jobs
			WHERE seq IS NULL AND state = 0 AND NOT taken AND request IS NOT NULL
			ORDER BY created_at, n LIMIT 1 FOR UPDATE SKIP LOCKED)
		UPDATE jobs j SET state = 1, taken = true, request = NULL,
			started_at = greatest(coalesce($1, `+dbNow+`), j.created_at),
			owner = $2, lease_until = coalesce($1, `+dbNow+`) + $3::bigint
		FROM c WHERE j.id = c.id
		RETURNING j.id, j.task_id, j.state, j.error, j.created_at, j.started_at, j.completed_at, c.request`,
		s.now(), s.opts.Replica, s.opts.Lease.Nanoseconds()), &req))
	switch {
	case err == nil:
		s.hold(snap.ID)
		return snap, req, nil
	case errors.Is(err, pgx.ErrNoRows):
		return ledger.Snapshot{}, nil, ledger.ErrNoWork
	default:
		return ledger.Snapshot{}, nil, s.callErr(ctx, "claiming a job", err)
	}
}
