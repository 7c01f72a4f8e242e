package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// CheckInvariants reports every invariant of the ledger's contract that the
// store violates, joined, or nil: the clauses of jobtable's checker, under
// the same names (those of spec/JobTable.tla), on the committed rows, plus
// the agreement of the rows with the writer's counters. It reads the whole
// table in one read transaction, so it sees one commit; it is exact only
// while no write is in flight (a write between its commit and the writer's
// publishing of the counters would show as a disagreement). A closed store
// has nothing left to check: its file is checked again by the next Open.
func (s *Store) CheckInvariants() error {
	if s.closed.Load() {
		return nil
	}
	return s.checkInvariants(context.Background())
}

// row is one job as checkInvariants reads it.
type row struct {
	id                          string
	state                       ledger.State
	request, result, err        bool // the column is not NULL
	created, started, completed sql.NullInt64
	seq                         sql.NullInt64
}

func (s *Store) checkInvariants(ctx context.Context) error {
	var errs []error
	fail := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	// The read ends, and gives its connection back, before takeMu and
	// waitMu are taken: nothing waits for a lock while it holds a reader
	// connection that a TakeRequest may be waiting for (take.go).
	live, terminal, err := s.checkRows(ctx, fail)
	if err != nil {
		return err
	}

	s.takeMu.Lock()
	for id := range s.taken {
		if _, ok := live[id]; !ok {
			fail("RequestOnceInv", "job %s: taken mark kept for a job that is not live (terminal %t)", id, terminal[id])
		}
	}
	s.takeMu.Unlock()

	s.waitMu.Lock()
	for id, w := range s.waiters {
		if w.blocked < 0 || w.blocked > w.n {
			fail("TypeInv", "job %s: %d waiters, %d blocked", id, w.n, w.blocked)
		}
		if w.blocked > 0 && terminal[id] {
			fail("NoLostWakeupInv", "job %s: ended, %d waiters still blocked", id, w.blocked)
		}
	}
	s.waitMu.Unlock()
	return errors.Join(errs...)
}

// checkRows checks the clauses on the committed rows and the writer's
// counters, in one read transaction, and returns the jobs it found live,
// with their states, and those it found terminal. An error is a failure of
// the read.
func (s *Store) checkRows(ctx context.Context, fail func(name, format string, args ...any)) (
	live map[string]ledger.State, terminal map[string]bool, err error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
	}
	defer tx.Rollback()

	var stored int
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'depth'`).Scan(&stored); err != nil {
		return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, state, request IS NOT NULL, result IS NOT NULL,
		error IS NOT NULL, created_at, started_at, completed_at, seq FROM jobs ORDER BY seq, rowid`)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
	}
	defer rows.Close()
	live = make(map[string]ledger.State)
	terminal = make(map[string]bool)
	jobs, retained := 0, 0
	var prev *row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.state, &r.request, &r.result, &r.err,
			&r.created, &r.started, &r.completed, &r.seq); err != nil {
			return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
		}
		jobs++
		if r.state.Terminal() {
			retained++
			terminal[r.id] = true
		} else {
			live[r.id] = r.state
		}
		checkRow(fail, &r)
		if r.seq.Valid && prev != nil && prev.seq.Valid {
			// Rows come in seq order, the live ones (NULL) first.
			if r.seq.Int64 == prev.seq.Int64 {
				fail("RetentionListInv", "jobs %s and %s share seq %d", prev.id, r.id, r.seq.Int64)
			}
			if r.completed.Int64 < prev.completed.Int64 {
				fail("RetentionListInv", "job %s completed before job %s, ordered after it", r.id, prev.id)
			}
		}
		prev = &r
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
	}

	// ListOrderInv: every job has an admission ordinal (unique by the
	// index jobs_admission), each below the stored next_n.
	var nextN, unnumbered, top int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'next_n'),
		(SELECT count(*) FROM jobs WHERE n IS NULL OR n < 1), (SELECT coalesce(max(n), 0) FROM jobs)`).
		Scan(&nextN, &unnumbered, &top); err != nil {
		return nil, nil, fmt.Errorf("sqlite: checking invariants: %w", err)
	}
	if unnumbered != 0 || top >= nextN {
		fail("ListOrderInv", "%d jobs without an ordinal, the highest %d, next_n %d", unnumbered, top, nextN)
	}

	depth := int(s.pub.depth.Load())
	if depth < 0 || depth > s.maxDepth {
		fail("DepthBoundInv", "depth %d outside [0, %d]", depth, s.maxDepth)
	}
	if depth != len(live) || stored != len(live) {
		fail("DepthInv", "depth %d, stored depth %d, non-terminal jobs %d", depth, stored, len(live))
	}
	if j, r := int(s.pub.jobs.Load()), int(s.pub.retained.Load()); j != jobs || r != retained {
		fail("CountersInv", "counted %d jobs, %d retained; the table holds %d, %d", j, r, jobs, retained)
	}
	// Between two Submits only the jobs live at the first can end, so
	// retention is bounded by MaxCompleted plus the depth bound.
	if limit := s.cfg.MaxCompleted; limit > 0 && retained > limit+s.maxDepth {
		fail("RetentionBoundInv", "%d terminal jobs retained, more than %d + %d", retained, limit, s.maxDepth)
	}

	return live, terminal, nil
}

// checkRow checks the clauses that concern one job alone.
func checkRow(fail func(name, format string, args ...any), r *row) {
	s, id := r.state, r.id
	if !s.Valid() {
		fail("TypeInv", "job %s: state %d is no State", id, int(s))
	}
	if s.Terminal() != r.completed.Valid || s.Terminal() != r.seq.Valid {
		fail("PayloadConsistencyInv", "job %s: %s with completed_at %v, seq %v", id, s, r.completed, r.seq)
	}
	if (s == ledgertype.Failed || s == ledgertype.TimedOut) != r.err {
		fail("PayloadConsistencyInv", "job %s: %s with error set %t", id, s, r.err)
	}
	if s != ledgertype.Done && r.result {
		fail("PayloadConsistencyInv", "job %s: %s with a result", id, s)
	}
	if s == ledgertype.Running && !r.started.Valid {
		fail("PayloadConsistencyInv", "job %s: RUNNING without started_at", id)
	}
	if r.started.Valid && r.started.Int64 < r.created.Int64 {
		fail("TimestampOrderInv", "job %s: started %d before created %d", id, r.started.Int64, r.created.Int64)
	}
	if r.completed.Valid && r.completed.Int64 < r.created.Int64 {
		fail("TimestampOrderInv", "job %s: completed %d before created %d", id, r.completed.Int64, r.created.Int64)
	}
	if r.started.Valid && r.completed.Valid && r.completed.Int64 < r.started.Int64 {
		fail("TimestampOrderInv", "job %s: completed %d before started %d", id, r.completed.Int64, r.started.Int64)
	}
	if s.Terminal() && r.request {
		fail("TerminalReleasesRequestInv", "job %s: %s still holds its request", id, s)
	}
	if s == ledgertype.Pending && !r.request {
		fail("RequestOnceInv", "job %s: PENDING without its request", id)
	}
}
