package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The reads run on the reader connections, outside the writer: each is one
// statement, so one read transaction, and sees the database as of the
// latest commit, which is on disk (in WAL mode SQLite makes a commit
// visible to readers only after it synced the log). No reader ever sees a
// state that a crash could undo, and a read that starts after a call was
// acknowledged sees that call's effect.

// readStmts are the reads, prepared on the reader pool (database/sql
// prepares each again on every connection that runs it).
type readStmts struct {
	state, snapshot, result, request, key *sql.Stmt
	list, listTask, listState, listTenant *sql.Stmt // list.go
}

func prepareReads(ctx context.Context, db *sql.DB) (*readStmts, error) {
	texts := []string{
		`SELECT state, tenant FROM jobs WHERE id = ?1`,
		`SELECT ` + snapCols + ` FROM jobs WHERE id = ?1`,
		`SELECT ` + snapCols + `, result FROM jobs WHERE id = ?1`,
		`SELECT state, request IS NOT NULL, request, tenant FROM jobs WHERE id = ?1`,
		`SELECT id, idem_digest FROM jobs WHERE tenant = ?1 AND idem_key = ?2`,
		qListAll,
		qListTask,
		qListState,
		qListTenant,
	}
	ps := make([]*sql.Stmt, len(texts))
	for i, text := range texts {
		st, err := db.PrepareContext(ctx, text)
		if err != nil {
			closeStmts(ps)
			return nil, fmt.Errorf("sqlite: preparing %q: %w", text, err)
		}
		ps[i] = st
	}
	return &readStmts{state: ps[0], snapshot: ps[1], result: ps[2], request: ps[3], key: ps[4],
		list: ps[5], listTask: ps[6], listState: ps[7], listTenant: ps[8]}, nil
}

func (r *readStmts) close() {
	closeStmts([]*sql.Stmt{r.state, r.snapshot, r.result, r.request, r.key, r.list, r.listTask, r.listState, r.listTenant})
}

// LookupKey returns the id and digest of the job of tenant that holds the
// idempotency key as of the latest commit, or ErrNotFound: a read, on the
// reader pool, which a replay needs instead of a write.
func (s *Store) LookupKey(ctx context.Context, tenant, key string) (string, string, error) {
	if s.closed.Load() {
		return "", "", ledger.ErrClosed
	}
	var id, digest string
	if err := s.reads.key.QueryRowContext(ctx, tenant, key).Scan(&id, &digest); err != nil {
		return "", "", s.readErr(ctx, "under key "+strconv.Quote(key), err)
	}
	return id, digest, nil
}

// TenantDepth counts tenant's jobs that are not terminal as of the latest
// commit (ledger.TenantCounter).
func (s *Store) TenantDepth(ctx context.Context, tenant string) (int, error) {
	if s.closed.Load() {
		return 0, ledger.ErrClosed
	}
	var n int
	err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM jobs INDEXED BY jobs_tenant_live WHERE tenant = ?1 AND seq IS NULL`, tenant).Scan(&n)
	if err != nil {
		return 0, s.listErr(ctx, err)
	}
	return n, nil
}

// State returns the job's state alone, or ErrNotFound.
func (s *Store) State(ctx context.Context, id string) (ledger.State, error) {
	if s.closed.Load() {
		return 0, ledger.ErrClosed
	}
	var state int64
	var tenant string
	if err := s.reads.state.QueryRowContext(ctx, id).Scan(&state, &tenant); err != nil {
		return 0, s.readErr(ctx, id, err)
	}
	if !ledgertype.Sees(ctx, tenant) {
		return 0, ledger.ErrNotFound
	}
	return ledger.State(state), nil
}

// Snapshot returns the job as of the latest commit, or ErrNotFound.
func (s *Store) Snapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	return s.readSnapshot(ctx, id)
}

func (s *Store) readSnapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	snap, err := scanSnapshot(s.reads.snapshot.QueryRowContext(ctx, id))
	if err != nil {
		return ledger.Snapshot{}, s.readErr(ctx, id, err)
	}
	if !ledgertype.Sees(ctx, snap.Tenant) {
		return ledger.Snapshot{}, ledger.ErrNotFound
	}
	return snap, nil
}

// Result returns a DONE job's result with its snapshot, repeatably until
// eviction; ErrNotDone with the snapshot for a job in another state.
func (s *Store) Result(ctx context.Context, id string) ([]byte, ledger.Snapshot, error) {
	if s.closed.Load() {
		return nil, ledger.Snapshot{}, ledger.ErrClosed
	}
	var res []byte
	snap, err := scanSnapshot(s.reads.result.QueryRowContext(ctx, id), &res)
	switch {
	case err != nil:
		return nil, ledger.Snapshot{}, s.readErr(ctx, id, err)
	case !ledgertype.Sees(ctx, snap.Tenant):
		return nil, ledger.Snapshot{}, ledger.ErrNotFound
	case snap.State != ledgertype.Done:
		return nil, snap, ledger.ErrNotDone
	}
	return res, snap, nil
}

// readErr is the error a read of job id returns for err: ErrNotFound for
// no row, ErrClosed if the store closed under it, ctx's error if ctx
// ended, else a failure of the database.
func (s *Store) readErr(ctx context.Context, id string, err error) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ledger.ErrNotFound
	case s.closed.Load():
		return ledger.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("sqlite: reading job %s: %w", id, err)
}
