package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestTransient: the failures a retry may get past, those of the
// connections' bounds among them, are told from those it cannot, and from
// the end of the caller's context.
func TestTransient(t *testing.T) {
	t.Parallel()
	_, refused := pgconn.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	require.Error(t, refused)
	pg := func(code string) error { return fmt.Errorf("postgres: ending job x: %w", &pgconn.PgError{Code: code}) }
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                    {nil, false},
		"refused connect":        {refused, true},
		"lock_timeout":           {pg("55P03"), true},
		"idle in transaction":    {pg("25P03"), true},
		"serialization":          {pg("40001"), true},
		"deadlock":               {pg("40P01"), true},
		"admin shutdown":         {pg("57P01"), true},
		"crash shutdown":         {pg("57P02"), true},
		"cannot connect now":     {pg("57P03"), true},
		"connection failure":     {pg("08006"), true},
		"unique violation":       {pg("23505"), false},
		"query canceled":         {pg("57014"), false},
		"undefined table":        {pg("42P01"), false},
		"context canceled":       {fmt.Errorf("postgres: %w", context.Canceled), false},
		"context deadline":       {fmt.Errorf("postgres: %w", context.DeadlineExceeded), false},
		"not a database failure": {errors.New("ledger: decoding the request"), false},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, postgres.Transient(tc.err), "%v", tc.err)
		})
	}
}

// TestBoundsFailTransiently: a lock wait past lock_timeout and a
// transaction left idle past idle_in_transaction_session_timeout fail with
// their SQLSTATEs, both transient.
func TestBoundsFailTransiently(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	s := openReplica(t, dsn, "a", nil, 600*time.Millisecond) // idle 200 ms, lock wait 400 ms

	// A session without the bounds holds the ledger row, idle in its
	// transaction: the Store's Submit waits for the row until lock_timeout.
	holder, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM ledger WHERE id = 1 FOR UPDATE`)
	require.NoError(t, err)
	_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
	requireCode(t, err, "55P03")
	require.NoError(t, tx.Rollback(ctx))

	// A transaction of the Store's left idle: the server ends the session
	// (seen from another one), and the next statement gets its reason.
	require.NoError(t, s.WithConn(ctx, func(c *pgx.Conn) error {
		tx, err := c.Begin(ctx)
		require.NoError(t, err)
		pid := c.PgConn().PID()
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, holder.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&n))
			return n == 0
		}, 30*time.Second, 10*time.Millisecond, "the idle transaction's session ended")
		_, err = tx.Exec(ctx, `SELECT 1`)
		requireCode(t, err, "25P03")
		return nil
	}))
}

// requireCode checks that err carries SQLSTATE code and is transient.
func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, code, pe.Code, "%v", err)
	require.True(t, postgres.Transient(err), "%v", err)
}
