package postgres

import (
	"context"
	"errors"

	"github.com/jobledger/jobledger/ledger"
)

// Claim takes the oldest PENDING job whose request nobody has taken, takes
// its request and starts it, under a lease of this replica: ledger.ErrNoWork
// when there is none. It returns the snapshot Start would, and the
// request.
//
// Claims are writes of the writer's batches (writer.go): one statement
// claims a job for each Claim of the batch. It locks its candidates with
// FOR UPDATE SKIP LOCKED, so claimers on any replicas pass over each
// other's candidates instead of queueing behind them, and re-checks each
// once locked on the latest commit (READ COMMITTED): a job another replica
// took, started or ended meanwhile is skipped, so each job is claimed at
// most once, and never one a reaper ended. The job is held (its lease
// renewed by the keeper) before its request is handed over: a request
// larger than inlineRequest stays in the row and is read here, after which
// the lease is renewed and the request released, so a long transfer never
// lets the lease lapse under a live replica.
func (s *Store) Claim(ctx context.Context) (ledger.Snapshot, []byte, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, nil, ledger.ErrClosed
	}
	r := s.await(ctx, &op{kind: opClaim, now: s.now()})
	switch {
	case errors.Is(r.err, ledger.ErrNoWork):
		return ledger.Snapshot{}, nil, r.err
	case r.err != nil:
		return ledger.Snapshot{}, nil, s.callErr(ctx, "claiming a job", r.err)
	case r.req == nil && r.reqLen > 0:
		req, err := s.readClaimed(ctx, r.snap.ID)
		return r.snap, req, err
	}
	if r.req == nil {
		r.req = []byte{}
	}
	return r.snap, r.req, nil
}

// readClaimed reads the request of job id, which this Store claimed and
// holds, then releases it and renews the job's lease. An error leaves the
// job held: its caller gets the snapshot and the error, and ends the job.
func (s *Store) readClaimed(ctx context.Context, id string) ([]byte, error) {
	var req []byte
	if err := s.pool.QueryRow(ctx, `SELECT request FROM jobs WHERE id = $1 AND owner = $2 AND seq IS NULL`,
		id, s.opts.Replica).Scan(&req); err != nil {
		return nil, s.callErr(ctx, "reading the request of job "+id, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE jobs SET request = NULL, lease_until = coalesce($3, `+dbNow+`) + $4::bigint
		WHERE id = $1 AND owner = $2 AND seq IS NULL`, id, s.opts.Replica, s.now(), s.opts.Lease.Nanoseconds()); err != nil {
		return nil, s.callErr(ctx, "renewing the lease of job "+id, err)
	}
	return req, nil
}
