package postgres_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// stripes is the shape of the admission and the end of a striped ledger,
// for BenchmarkLedgerRow to measure against the one row: counter rows
// (depth, next completion seq) one per stripe instead of one, in tables of
// the benchmark's own, and the store's statements, round trip for round
// trip, on them. It is a measuring device, not a store: nobody waits or
// claims, nothing reads its notifications, and it has no exact bound (a
// full stripe refuses; the benchmark's bound is never reached).
//
// pool is safe for concurrent use; next is atomic. k and keep are set by
// newStripes, read-only afterwards.
type stripes struct {
	pool *pgxpool.Pool
	k    int // stripes
	keep int // terminal jobs each stripe retains
	next atomic.Uint64
}

// newStripes makes k stripes, empty, in dsn's database (the tables are
// made the first time), and a pool of conns connections to them, closed
// when b ends.
func newStripes(b *testing.B, dsn string, k, conns int) *stripes {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS bench_stripes (k integer PRIMARY KEY, depth bigint NOT NULL, next_seq bigint NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			stripe integer NOT NULL, state smallint NOT NULL, request bytea, result bytea,
			created_at bigint NOT NULL, completed_at bigint, seq bigint)`,
		`CREATE INDEX IF NOT EXISTS bench_jobs_seq ON bench_jobs (stripe, seq) WHERE seq IS NOT NULL`,
		`CREATE INDEX IF NOT EXISTS bench_jobs_completed ON bench_jobs (stripe, completed_at) WHERE seq IS NOT NULL`,
		`TRUNCATE bench_stripes, bench_jobs`,
		fmt.Sprintf(`INSERT INTO bench_stripes SELECT g, 0, 1 FROM generate_series(0, %d) g`, k-1),
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return &stripes{pool: pool, k: k, keep: max(1, 1024/k)}
}

// stripeTTL is the retention's TTL, an hour as the store's default: the
// TTL pass finds nothing, as in the store's runs.
const stripeTTL = time.Hour

// pair admits a job on the next stripe and ends it DONE, in the store's
// two transactions with the stripe's row in place of the ledger row:
// BEGIN, the check-and-increment, the TTL and LRU passes (of the stripe),
// the INSERT, the notification, COMMIT; then BEGIN, the stripe's row FOR
// UPDATE, the job's UPDATE, the stripe's UPDATE, the notification, COMMIT.
func (st *stripes) pair() error {
	k := int((st.next.Add(1) - 1) % uint64(st.k))
	var id int64
	err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		now := time.Now().UnixNano()
		tag, err := tx.Exec(ctx, `UPDATE bench_stripes SET depth = depth + 1 WHERE k = $1 AND depth < $2`, k, 1<<20)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("stripe %d full", k)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM bench_jobs WHERE stripe = $1 AND seq IS NOT NULL
			AND completed_at <= $2`, k, now-stripeTTL.Nanoseconds()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM bench_jobs WHERE stripe = $1 AND seq IS NOT NULL AND seq <= (
			SELECT seq FROM bench_jobs WHERE stripe = $1 AND seq IS NOT NULL ORDER BY seq DESC OFFSET $2 LIMIT 1)`, k, st.keep); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO bench_jobs (stripe, state, request, created_at)
			VALUES ($1, 0, $2, $3) RETURNING id`, k, []byte("req"), now).Scan(&id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify('bench_work', '')`)
		return err
	})
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT next_seq FROM bench_stripes WHERE k = $1 FOR UPDATE`, k).Scan(&seq); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE bench_jobs SET state = 2, result = $1, completed_at = $2, seq = $3,
			request = NULL WHERE id = $4 AND seq IS NULL`, []byte("res"), time.Now().UnixNano(), seq, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("job %d did not end", id)
		}
		if _, err := tx.Exec(ctx, `UPDATE bench_stripes SET depth = depth - 1, next_seq = next_seq + 1 WHERE k = $1`, k); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify('bench_end', $1)`, fmt.Sprint(id))
		return err
	})
}
