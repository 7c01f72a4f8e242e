package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Leases (docs/scaling.md). A job holds a lease while it
// is RUNNING, or PENDING with its request taken: owner names the replica
// that runs it and lease_until says until when, in the store's time. The
// statements that give a job its lease (TakeRequest, Start, Claim) set
// both; an end clears lease_until. The keeper goroutine of each Store
// renews the leases of the jobs it holds (held.go) every Lease/3, then
// runs the reaper (reap.go), until Close.

// keep is the keeper goroutine: it renews, then reaps, every Lease/3 until
// ctx ends, then closes s.keepDone. A failed round (the database away) is
// retried at the next tick; a lease that lapses meanwhile is another
// replica's to reap.
func (s *Store) keep(ctx context.Context) {
	defer close(s.keepDone)
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_ = s.renew(ctx)
		_, _ = s.reap(ctx)
	}
}

// renew extends, in one statement, the lease of every live job this Store
// holds and its replica owns to Options.Lease from now. A job already
// ended (by the reaper of a replica that saw its lease lapse), or taken
// over by another replica, has none renewed, and is no longer held. It
// locks the rows in the order of their ids, as the reaper does, so that the two
// never deadlock. With no job held, it sends nothing.
func (s *Store) renew(ctx context.Context) error {
	held := s.heldNow()
	if len(held) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, qRenew, s.now(), s.opts.Lease.Nanoseconds(), s.opts.Replica, heldIDs(held))
	if err != nil {
		return s.callErr(ctx, "renewing the leases", err)
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return s.callErr(ctx, "renewing the leases", err)
	}
	kept := make(map[string]bool, len(renewed))
	for _, id := range renewed {
		kept[id] = true
	}
	s.forget(held, kept)
	return nil
}

// qRenew renews the leases of the held jobs $4 still live and this
// replica's ($3), their rows locked first in the order of their ids. The
// conditions other than the ids are the update's, out of the partial
// indexes' reach (as qEnd's), so that its plan reads the rows by their
// ids whatever the statistics it was made from.
const qRenew = `WITH locked AS (SELECT id FROM jobs WHERE id = ANY($4) ORDER BY id FOR UPDATE)
	UPDATE jobs j SET lease_until = coalesce($1, ` + dbNow + `) + $2::bigint FROM locked
	WHERE j.id = locked.id AND j.id = ANY($4) AND j.lease_until IS NOT NULL AND j.owner = $3
		AND (j.seq IS NULL) IS TRUE
	RETURNING j.id`
