package sqlite

import (
	"context"
	"database/sql"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Take-once is kept in memory: Store.taken marks the jobs whose request a
// TakeRequest of this process handed out. The request itself stays in the
// database, so that a job still PENDING when the process stops runs again
// after a restart (whose marks start empty); it is released (set to NULL)
// by the write that makes it useless: Start of a taken job (a job RUNNING
// at a restart ends FAILED, so nobody reads it again), or the job's end.
//
// TakeRequest holds takeMu across its check of the mark, its read of the
// committed row and the setting of the mark, so the takes of one store are
// one at a time, and each is atomic with respect to the others and to the
// writer's look at the marks (isTaken, under takeMu):
//
//   - against another take: the first to hold takeMu, if it finds the job
//     live, hands the request out and marks it; every later one finds the
//     mark (ErrRequestTaken) or, from a read after the job's end was
//     committed, the terminal state (ErrTerminal).
//   - against the job's end: the take's read is one statement, so it sees
//     the database before or after the commit that ended the job. Before:
//     the take is ordered before the end and hands out the request, which
//     the end then releases. After: ErrTerminal. The writer drops the mark
//     only after that commit (wake), when every read sees the end.
//   - against Start: Start releases the request only if the writer saw
//     the mark, which is set after the take's read has returned; a Start
//     that came first keeps the request (the end releases it), so a take
//     never finds a live job's request released under it.
//
// The price is that takes do not run in parallel with each other: each
// holds takeMu for one indexed read, tens of microseconds, against the
// hundreds a commit takes.
//
// A take gets its reader connection before it takes takeMu, as a read
// transaction that has read nothing yet (SQLite takes its snapshot at the
// first read, the one statement under takeMu). Waiting for a connection
// under takeMu would make every write that looks at the marks wait for the
// reader pool: the writer takes takeMu for each Start (isTaken), so a busy
// pool would stall group commit.

// TakeRequest hands out the job's request once while it is not terminal:
// ErrRequestTaken afterwards, ErrTerminal once it ended, ErrNotFound for a
// job the store does not hold. After a restart, a job still PENDING hands
// its request out again.
func (s *Store) TakeRequest(ctx context.Context, id string) ([]byte, error) {
	if s.closed.Load() {
		return nil, ledger.ErrClosed
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.readErr(ctx, id, err)
	}
	defer tx.Rollback()
	s.takeMu.Lock()
	defer s.takeMu.Unlock()
	_, taken := s.taken[id]
	var (
		state  int64
		held   bool
		req    []byte
		tenant string
	)
	if err := tx.StmtContext(ctx, s.reads.request).QueryRowContext(ctx, id).Scan(&state, &held, &req, &tenant); err != nil {
		return nil, s.readErr(ctx, id, err)
	}
	switch {
	case !ledgertype.Sees(ctx, tenant):
		return nil, ledger.ErrNotFound
	case ledger.State(state).Terminal():
		return nil, ledger.ErrTerminal
	case taken || !held:
		return nil, ledger.ErrRequestTaken
	}
	s.taken[id] = struct{}{}
	return req, nil
}

// isTaken reports whether a TakeRequest of this process handed out the
// request of job id: the writer asks it when it applies Start.
func (s *Store) isTaken(id string) bool {
	s.takeMu.Lock()
	defer s.takeMu.Unlock()
	_, ok := s.taken[id]
	return ok
}
