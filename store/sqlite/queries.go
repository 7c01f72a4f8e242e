package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// query names one statement of the writer's. Each is prepared once on the
// write connection at Open and bound to each transaction as it is first
// used (txq), so a batch of hundreds of writes compiles nothing.
type query int

const (
	qInsert      query = iota // Submit
	qStart                    // PENDING -> RUNNING
	qEnd                      // any live state -> a terminal one
	qLookup                   // the snapshot of a refused transition
	qTTLBound                 // the first terminal job that has not expired
	qEvictBelow               // TTL eviction: the terminal jobs before a seq
	qEvictOldest              // LRU eviction: the n least recently completed
	qSetDepth                 // meta's depth
	qInsertKeyed              // keyed Submit: a job that holds an idempotency key
	qKeyLookup                // keyed Submit: the job that holds a key, and its digest
	qSetNextN                 // meta's next_n: the next admission ordinal
	qSetCommits               // meta's commits: the transactions committed
	nQueries
)

// snapCols are the columns scanSnapshot reads, in its order.
const snapCols = `id, task_id, state, error, created_at, started_at, completed_at`

var queries = [nQueries]string{
	// A duplicate id inserts nothing and reports 0 rows, leaving the
	// transaction alive for the rest of the batch (see applySubmit).
	qInsert: `INSERT INTO jobs (id, task_id, state, request, created_at, n) VALUES (?1, ?2, 0, ?3, ?4, ?5)
		ON CONFLICT (id) DO NOTHING`,
	// ?2: the request was taken in this process, so Start releases it.
	qStart: `UPDATE jobs SET state = 1, started_at = ?1, request = CASE WHEN ?2 THEN NULL ELSE request END
		WHERE id = ?3 AND state = 0 RETURNING ` + snapCols,
	qEnd: `UPDATE jobs SET state = ?1, result = ?2, error = ?3, completed_at = ?4, seq = ?5, request = NULL
		WHERE id = ?6 AND seq IS NULL RETURNING ` + snapCols,
	qLookup: `SELECT ` + snapCols + ` FROM jobs WHERE id = ?1`,
	qTTLBound: `SELECT seq, completed_at FROM jobs WHERE seq IS NOT NULL AND completed_at > ?1
		ORDER BY seq LIMIT 1`,
	qEvictBelow: `DELETE FROM jobs WHERE seq IS NOT NULL AND seq < ?1`,
	qEvictOldest: `DELETE FROM jobs WHERE seq IS NOT NULL AND seq <= (
		SELECT seq FROM jobs WHERE seq IS NOT NULL ORDER BY seq LIMIT 1 OFFSET ?1 - 1)`,
	qSetDepth: `UPDATE meta SET value = ?1 WHERE key = 'depth'`,
	// The key was looked up in the same transaction (qKeyLookup), so the
	// unique index on idem_key is never the conflict; the id may be.
	qInsertKeyed: `INSERT INTO jobs (id, task_id, state, request, created_at, n, idem_key, idem_digest)
		VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING`,
	qKeyLookup:  `SELECT id, idem_digest FROM jobs WHERE idem_key = ?1`,
	qSetNextN:   `UPDATE meta SET value = ?1 WHERE key = 'next_n'`,
	qSetCommits: `UPDATE meta SET value = ?1 WHERE key = 'commits'`,
}

// prepareWrites prepares the writer's queries on db.
func prepareWrites(ctx context.Context, db *sql.DB) (*[nQueries]*sql.Stmt, error) {
	var ps [nQueries]*sql.Stmt
	for q, text := range queries {
		st, err := db.PrepareContext(ctx, text)
		if err != nil {
			closeStmts(ps[:])
			return nil, fmt.Errorf("sqlite: preparing %q: %w", text, err)
		}
		ps[q] = st
	}
	return &ps, nil
}

// closeStmts closes the statements of ps that are not nil.
func closeStmts(ps []*sql.Stmt) {
	for _, st := range ps {
		if st != nil {
			st.Close()
		}
	}
}

// txq runs the writer's queries inside one transaction: the prepared
// statements bound to tx, each on first use, or, while Open recovers the
// database (prepared is nil: the tables may not exist before the
// migrations), the query text.
type txq struct {
	ctx      context.Context
	tx       *sql.Tx
	prepared *[nQueries]*sql.Stmt
	bound    [nQueries]*sql.Stmt
}

func (t *txq) exec(q query, args ...any) (sql.Result, error) {
	if t.prepared == nil {
		return t.tx.ExecContext(t.ctx, queries[q], args...)
	}
	return t.stmt(q).ExecContext(t.ctx, args...)
}

func (t *txq) queryRow(q query, args ...any) *sql.Row {
	if t.prepared == nil {
		return t.tx.QueryRowContext(t.ctx, queries[q], args...)
	}
	return t.stmt(q).QueryRowContext(t.ctx, args...)
}

func (t *txq) stmt(q query) *sql.Stmt {
	if t.bound[q] == nil {
		t.bound[q] = t.tx.StmtContext(t.ctx, t.prepared[q])
	}
	return t.bound[q]
}
