package postgres

import (
	"context"
	"math"

	"github.com/jobledger/jobledger/ledger"
)

// Listing reads the jobs by their admission ordinal n (schema 4): a page is
// one SELECT of the rows with n below the cursor, highest first (one
// snapshot of the database under READ COMMITTED), and its next cursor is
// the n of its last row. A state filter reads that state's jobs alone, by
// jobs_state_admission (schema 5); a task id filter reads that task's jobs
// alone, by jobs_task_admission, a state filter then checked row by row.

// The page queries: $1 the ordinal to stay below, $2 the state (-1 for
// any), $3 the row count, $4 the tenant (NULL for any), $5 the task id.
// A scoped page without another filter reads the tenant's jobs alone, by
// jobs_tenant_admission; under a filter, the filter's index, the tenant
// checked row by row.
const (
	qListAll = `SELECT n, ` + snapCols + ` FROM jobs
		WHERE n < $1 AND ($2::smallint < 0 OR state = $2) AND ($4::text IS NULL OR tenant = $4) ORDER BY n DESC LIMIT $3`
	qListTask = `SELECT n, ` + snapCols + ` FROM jobs
		WHERE task_id = $5 AND n < $1 AND ($2::smallint < 0 OR state = $2) AND ` + "($4::text IS NULL OR tenant = $4)" + `
		ORDER BY n DESC LIMIT $3`
	qListState = `SELECT n, ` + snapCols + ` FROM jobs
		WHERE state = $2 AND n < $1 AND ($4::text IS NULL OR tenant = $4) ORDER BY n DESC LIMIT $3`
	qListTenant = `SELECT n, ` + snapCols + ` FROM jobs
		WHERE tenant = $4 AND n < $1 AND ($2::smallint < 0 OR state = $2) ORDER BY n DESC LIMIT $3`
)

// List returns a page of the jobs q selects, newest first by admission, as
// committed (see ledger.Ledger). It reads one row beyond the limit to know
// whether another page follows. A task id no job can have (text.go) is
// an empty page, the last.
func (s *Store) List(ctx context.Context, q ledger.ListQuery) (ledger.Page, error) {
	if s.closed.Load() {
		return ledger.Page{}, ledger.ErrClosed
	}
	tq, err := q.Resolve(ctx)
	if err != nil {
		return ledger.Page{}, err
	}
	if !storable(tq.TaskID) || !storable(tq.Tenant) {
		return ledger.Page{Jobs: []ledger.Snapshot{}}, nil // no job has it (text.go)
	}
	before := int64(math.MaxInt64)
	if tq.Before != 0 {
		before = int64(tq.Before)
	}
	state := int16(-1)
	if tq.ByState {
		state = int16(tq.State)
	}
	var tenant *string
	if tq.ByTenant {
		tenant = &tq.Tenant
	}
	text, args := qListAll, []any{before, state, tq.Limit + 1, tenant}
	switch {
	case tq.ByTaskID:
		text, args = qListTask, append(args, tq.TaskID)
	case tq.ByState:
		text = qListState
	case tq.ByTenant:
		text = qListTenant
	}
	rows, err := s.pool.Query(ctx, text, args...)
	if err != nil {
		return ledger.Page{}, s.callErr(ctx, "listing jobs", err)
	}
	defer rows.Close()
	page := ledger.Page{Jobs: make([]ledger.Snapshot, 0, tq.Limit)}
	var last, n int64
	for rows.Next() {
		if len(page.Jobs) == tq.Limit {
			page.Next = ledger.EncodeCursor(uint64(last))
			break
		}
		snap, err := scanSnapshot(prefixRow{rows, &n})
		if err != nil {
			return ledger.Page{}, s.callErr(ctx, "listing jobs", err)
		}
		last = n
		page.Jobs = append(page.Jobs, snap)
	}
	if err := rows.Err(); err != nil {
		return ledger.Page{}, s.callErr(ctx, "listing jobs", err)
	}
	return page, nil
}

// prefixRow scans one column into first, then what scanSnapshot asks.
type prefixRow struct {
	row   interface{ Scan(...any) error }
	first *int64
}

func (p prefixRow) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }
