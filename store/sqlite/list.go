package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/jobledger/jobledger/ledger"
)

// Listing reads the jobs by their admission ordinal n (schema 3): a page is
// one SELECT of the rows with n below the cursor, highest first, so it is
// one committed state of the file, and its next cursor is the n of its
// last row. The index jobs_admission gives the order without a sort;
// under a state filter, jobs_state_admission (schema 4) gives it for that
// state alone, and under a task id filter jobs_task_admission gives it for
// that task alone, a state filter then checked row by row along it.

// listCols are the columns a page reads: the ordinal, then snapCols.
const listCols = `n, ` + snapCols

// The page queries: ?1 the ordinal to stay below, ?2 the state (-1 for
// any), ?3 the row count, ?4 the task id, ?5 the tenant (NULL for any).
const (
	qListAll = `SELECT ` + listCols + ` FROM jobs INDEXED BY jobs_admission
		WHERE n < ?1 AND (?2 < 0 OR state = ?2) AND (?5 IS NULL OR tenant = ?5) ORDER BY n DESC LIMIT ?3`
	qListTask = `SELECT ` + listCols + ` FROM jobs INDEXED BY jobs_task_admission
		WHERE task_id = ?4 AND n < ?1 AND (?2 < 0 OR state = ?2) AND (?5 IS NULL OR tenant = ?5) ORDER BY n DESC LIMIT ?3`
	qListState = `SELECT ` + listCols + ` FROM jobs INDEXED BY jobs_state_admission
		WHERE state = ?2 AND n < ?1 AND (?5 IS NULL OR tenant = ?5) ORDER BY n DESC LIMIT ?3`
	qListTenant = `SELECT ` + listCols + ` FROM jobs INDEXED BY jobs_tenant_admission
		WHERE tenant = ?5 AND n < ?1 AND (?2 < 0 OR state = ?2) AND (?4 IS NULL OR task_id = ?4) ORDER BY n DESC LIMIT ?3`
)

// List returns a page of the jobs q selects, newest first by admission,
// as of the latest commit (see ledger.Ledger). It reads one row beyond the
// limit to know whether another page follows, so a walk ends without an
// empty page.
func (s *Store) List(ctx context.Context, q ledger.ListQuery) (ledger.Page, error) {
	if s.closed.Load() {
		return ledger.Page{}, ledger.ErrClosed
	}
	tq, err := q.Resolve(ctx)
	if err != nil {
		return ledger.Page{}, err
	}
	before := int64(math.MaxInt64)
	if tq.Before != 0 {
		before = int64(tq.Before)
	}
	state := int64(-1)
	if tq.ByState {
		state = int64(tq.State)
	}
	// A scoped page that filters by state or task id walks that filter's
	// index and checks the tenant row by row; otherwise the tenant's own.
	st := s.reads.list
	switch {
	case tq.ByTaskID:
		st = s.reads.listTask
	case tq.ByState:
		st = s.reads.listState
	case tq.ByTenant:
		st = s.reads.listTenant
	}
	task, tenant := sql.NullString{String: tq.TaskID, Valid: tq.ByTaskID}, sql.NullString{String: tq.Tenant, Valid: tq.ByTenant}
	rows, err := st.QueryContext(ctx, before, state, tq.Limit+1, task, tenant)
	if err != nil {
		return ledger.Page{}, s.listErr(ctx, err)
	}
	defer rows.Close()
	page := ledger.Page{Jobs: make([]ledger.Snapshot, 0, tq.Limit)}
	var last int64
	for rows.Next() {
		if len(page.Jobs) == tq.Limit {
			page.Next = ledger.EncodeCursor(uint64(last))
			break
		}
		snap, err := scanSnapshot(prefixed{rows, &last})
		if err != nil {
			return ledger.Page{}, s.listErr(ctx, err)
		}
		page.Jobs = append(page.Jobs, snap)
	}
	if err := rows.Err(); err != nil {
		return ledger.Page{}, s.listErr(ctx, err)
	}
	return page, nil
}

// prefixed scans one column into first, then the rest as scanSnapshot
// asks.
type prefixed struct {
	rows  *sql.Rows
	first *int64
}

func (p prefixed) Scan(dest ...any) error {
	return p.rows.Scan(append([]any{p.first}, dest...)...)
}

// listErr is the error a page returns for err: ErrClosed if the store
// closed under it, ctx's error if ctx ended, else a failure of the
// database.
func (s *Store) listErr(ctx context.Context, err error) error {
	switch {
	case s.closed.Load():
		return ledger.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("sqlite: listing jobs: %w", err)
}
