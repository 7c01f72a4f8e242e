package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// Leases reports, by replica, the live jobs held under a lease, when the
// first of each replica's leases lapses, and whether one has (see
// ledger.LeaseReporter). One read, in the store's time.
func (s *Store) Leases(ctx context.Context) ([]ledger.ReplicaLeases, error) {
	rows, err := s.pool.Query(ctx, `SELECT owner, count(*), min(lease_until), bool_or(lease_until < coalesce($1, `+dbNow+`))
		FROM jobs WHERE lease_until IS NOT NULL AND seq IS NULL GROUP BY owner ORDER BY owner`, s.now())
	if err != nil {
		return nil, s.callErr(ctx, "reading the leases", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ledger.ReplicaLeases, error) {
		var (
			r     ledger.ReplicaLeases
			owner *string
			next  int64
		)
		err := row.Scan(&owner, &r.Jobs, &next, &r.Lapsed)
		if owner != nil {
			r.Replica = *owner
		}
		r.Next = time.Unix(0, next)
		return r, err
	})
	if err != nil {
		return nil, s.callErr(ctx, "reading the leases", err)
	}
	return out, nil
}
