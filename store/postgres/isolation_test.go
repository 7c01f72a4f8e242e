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
						id, err := s.Submit(ctx, strconv.Itoa(w*rounds+r), nil)
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
	ledgertest.Run(t, reopenableOn(func(t testing.TB) string { return isolatedDatabase(t, "repeatable read") },
		func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string] {
			s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{})
			require.NoError(t, err)
			return ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
		}))
}
