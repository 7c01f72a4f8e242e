package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// snapCols are the columns scanSnapshot reads, in its order.
const snapCols = `id, task_id, tenant, state, error, created_at, started_at, completed_at`

// scope is the tenant a call under ctx is scoped to (ledger.WithTenant), nil
// for none: the last parameter of every statement that names a job, which
// then finds no row of another tenant, as for an id no job has.
func scope(ctx context.Context) *string {
	if tenant, ok := ledger.TenantScope(ctx); ok {
		return &tenant
	}
	return nil
}

// scoped is the condition on a job's row of a statement whose parameter n
// is scope's.
func scoped(n string) string { return `($` + n + `::text IS NULL OR tenant = $` + n + `)` }

// scanSnapshot reads one row of snapCols.
func scanSnapshot(row pgx.Row) (ledger.Snapshot, error) {
	var (
		snap               ledger.Snapshot
		state              int16
		errText            *string
		created            int64
		started, completed *int64
	)
	if err := row.Scan(&snap.ID, &snap.TaskID, &snap.Tenant, &state, &errText, &created, &started, &completed); err != nil {
		return ledger.Snapshot{}, err
	}
	snap.State = ledger.State(state)
	if errText != nil {
		snap.Err = ledger.CauseFromText(*errText)
	}
	snap.CreatedAt = fromNanos(&created)
	snap.StartedAt = fromNanos(started)
	snap.CompletedAt = fromNanos(completed)
	return snap, nil
}

// readSnapshot reads job id's committed snapshot: ErrNotFound for a job the
// store does not hold (at once for an id no job can have: text.go).
func (s *Store) readSnapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	if !storable(id) {
		return ledger.Snapshot{}, ledger.ErrNotFound
	}
	snap, err := scanSnapshot(s.pool.QueryRow(ctx, `SELECT `+snapCols+` FROM jobs WHERE id = $1 AND `+scoped("2"), id, scope(ctx)))
	switch {
	case err == nil:
		return snap, nil
	case errors.Is(err, pgx.ErrNoRows):
		return ledger.Snapshot{}, ledger.ErrNotFound
	default:
		return ledger.Snapshot{}, s.callErr(ctx, "reading job "+id, err)
	}
}

// Snapshot is the job's committed snapshot.
func (s *Store) Snapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	return s.readSnapshot(ctx, id)
}

// TenantDepth counts tenant's jobs that are not terminal, as committed
// (ledger.TenantCounter).
func (s *Store) TenantDepth(ctx context.Context, tenant string) (int, error) {
	if s.closed.Load() {
		return 0, ledger.ErrClosed
	}
	if !storable(tenant) {
		return 0, nil // no job has it (text.go)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE tenant = $1 AND seq IS NULL`, tenant).Scan(&n); err != nil {
		return 0, s.callErr(ctx, "counting a tenant's jobs", err)
	}
	return n, nil
}

// State is the job's committed state.
func (s *Store) State(ctx context.Context, id string) (ledger.State, error) {
	if s.closed.Load() {
		return 0, ledger.ErrClosed
	}
	if !storable(id) {
		return 0, ledger.ErrNotFound
	}
	var state int16
	err := s.pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 AND `+scoped("2"), id, scope(ctx)).Scan(&state)
	switch {
	case err == nil:
		return ledger.State(state), nil
	case errors.Is(err, pgx.ErrNoRows):
		return 0, ledger.ErrNotFound
	default:
		return 0, s.callErr(ctx, "reading job "+id, err)
	}
}

// Result returns a DONE job's result, repeatably until it is evicted;
// ErrNotDone, with the snapshot, for a job in another state. Snapshot and
// result come from one read.
func (s *Store) Result(ctx context.Context, id string) ([]byte, ledger.Snapshot, error) {
	if s.closed.Load() {
		return nil, ledger.Snapshot{}, ledger.ErrClosed
	}
	if !storable(id) {
		return nil, ledger.Snapshot{}, ledger.ErrNotFound
	}
	var res []byte
	snap, err := scanSnapshot(rowWith(s.pool.QueryRow(ctx, `SELECT `+snapCols+`, result FROM jobs WHERE id = $1 AND `+scoped("2"),
		id, scope(ctx)), &res))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, ledger.Snapshot{}, ledger.ErrNotFound
	case err != nil:
		return nil, ledger.Snapshot{}, s.callErr(ctx, "reading job "+id, err)
	case snap.State != ledgertype.Done:
		return nil, snap, ledger.ErrNotDone
	}
	if res == nil {
		res = []byte{}
	}
	return res, snap, nil
}

// rowWith is row with extra destinations scanned after snapCols.
func rowWith(row pgx.Row, extra ...any) pgx.Row { return extraRow{row, extra} }

type extraRow struct {
	pgx.Row
	extra []any
}

func (r extraRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// TakeRequest hands out the job's request once while it is not terminal,
// and gives the job a lease of this replica (lease.go):
// ErrRequestTaken afterwards, ErrTerminal once it ended, ErrNotFound for a
// job the store does not hold.
//
// Take-once holds across replicas: the mark is the row's taken column,
// set by one UPDATE whose WHERE clause is the whole check (live, not
// taken, request held), so of concurrent takes on any replicas exactly
// one row update succeeds (a blocked UPDATE re-checks its WHERE on the
// committed row). The request stays in the row while the job is PENDING;
// Open's restart clears the marks its replica name set on PENDING jobs,
// so a job that never started runs again after a restart, as with the
// SQLite store, and the reaper fails a taken job whose lease lapsed.
func (s *Store) TakeRequest(ctx context.Context, id string) ([]byte, error) {
	if s.closed.Load() {
		return nil, ledger.ErrClosed
	}
	if !storable(id) {
		return nil, ledger.ErrNotFound
	}
	var req []byte
	err := s.pool.QueryRow(ctx, `UPDATE jobs SET taken = true,
			owner = $2, lease_until = coalesce($3, `+dbNow+`) + $4::bigint
		WHERE id = $1 AND seq IS NULL AND NOT taken AND request IS NOT NULL AND `+scoped("5")+` RETURNING request`,
		id, s.opts.Replica, s.now(), s.opts.Lease.Nanoseconds(), scope(ctx)).Scan(&req)
	switch {
	case err == nil:
		s.hold(id)
		return req, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, s.callErr(ctx, "taking the request of job "+id, err)
	}
	// Refused: say why, from a later read. The job can only have moved
	// on (ended, or been evicted after it ended), never back.
	st, err := s.State(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case st.Terminal():
		return nil, ledger.ErrTerminal
	default:
		return nil, ledger.ErrRequestTaken
	}
}
