package postgres_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
	"github.com/jobledger/jobledger/store/postgres"
)

// isolatedDatabase is an empty database whose sessions default to the
// isolation level level (as an operator's ALTER DATABASE leaves them).
func isolatedDatabase(t testing.TB, level string) string {
	t.Helper()
	dsn := newDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var name string
	require.NoError(t, conn.QueryRow(ctx, `SELECT current_database()`).Scan(&name))
	_, err = conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET default_transaction_isolation = '`+level+`'`)
	require.NoError(t, err)
	return dsn
}

// TestIsolationOfTheDatabaseIgnored: the store runs READ COMMITTED
// whatever the database's default isolation level, since its re-checks
// after a blocked write (admission, ends, Claim, the reaper) depend on
// it. Regression: with a default of REPEATABLE READ or SERIALIZABLE,
// concurrent Submits and Finishes failed with SQLSTATE 40001
// (serialization failure) and left jobs live.
func TestIsolationOfTheDatabaseIgnored(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"repeatable read", "serializable"} {
		t.Run(level, func(t *testing.T) {
			s, err := postgres.Open(ctx, isolatedDatabase(t, level), ledger.Config{MaxQueue: 64}, postgres.Options{})
			require.NoError(t, err)
			defer s.Close()
			const workers, rounds = 16, 8
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for r := range rounds {
						id, _, err := s.Submit(ctx, ledger.Submission{TaskID: strconv.Itoa(w*rounds + r)}, nil)
						if err != nil {
							t.Errorf("Submit: %v", err)
							return
						}
						if _, err := s.Finish(ctx, id, nil); err != nil {
							t.Errorf("Finish: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			require.Equal(t, 0, s.Stats().Depth, "every job ended")
			_, _, err = s.Claim(ctx)
			require.True(t, errors.Is(err, ledger.ErrNoWork), "Claim on no work: %v", err)
		})
	}
}

// TestConformanceRepeatableRead runs the contract's suite on databases
// whose sessions default to REPEATABLE READ.
func TestConformanceRepeatableRead(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, reopenableOn(func(t testing.TB) string { return isolatedDatabase(t, "repeatable read") },
		func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string] {
			s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{})
			require.NoError(t, err)
			return ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
		}))
}

// TestOpenBesideAnEndOnRepeatableRead: a replica that opens while another
// replica's end holds the ledger row, on a database whose sessions default
// to REPEATABLE READ, waits for the end and opens on the ledger as the end
// left it. Regression: left to the database's level, Open's transaction
// reads from a snapshot taken before its lock was granted, and fails with
// a serialization error (or reads a stale depth).
func TestOpenBesideAnEndOnRepeatableRead(t *testing.T) {
	t.Parallel()
	dsn := isolatedDatabase(t, "repeatable read")
	a, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 4}, postgres.Options{Replica: "a"})
	require.NoError(t, err)
	defer a.Close()
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	// Another replica's end, in flight: it holds the ledger row.
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `UPDATE ledger SET depth = depth - 1, next_seq = next_seq + 1 WHERE id = 1`)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `UPDATE jobs SET state = 3, error = 'gone', request = NULL,
		completed_at = created_at, seq = (SELECT next_seq - 1 FROM ledger WHERE id = 1) WHERE id = $1`, id)
	require.NoError(t, err)

	type opened struct {
		s   *postgres.Store
		err error
	}
	got := make(chan opened, 1)
	go func() {
		s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 4}, postgres.Options{Replica: "b"})
		got <- opened{s, err}
	}()
	awaitLockWaiter(t, dsn)
	require.NoError(t, tx.Commit(ctx))
	o := <-got
	require.NoError(t, o.err, "Open beside a committed end")
	defer o.s.Close()
	require.Equal(t, 0, o.s.Stats().Depth)
	require.NoError(t, o.s.CheckInvariants())
}
