package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// openReplica opens a Store named replica on dsn, on clock, with lease
// (zero: the default), closed when t ends.
func openReplica(t *testing.T, dsn, replica string, clock *fakeClock, lease time.Duration) *postgres.Store {
	t.Helper()
	cfg := ledger.Config{MaxQueue: 16}
	if clock != nil {
		cfg.Now = clock.Now
	}
	s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{Replica: replica, Lease: lease})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.CheckInvariants())
		require.NoError(t, s.Close())
	})
	return s
}

// lease is a job's owner and lease expiry as stored (nil: none).
type lease struct {
	owner *string
	until *int64
}

func readLease(t *testing.T, dsn, id string) lease {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var l lease
	require.NoError(t, conn.QueryRow(ctx, `SELECT owner, lease_until FROM jobs WHERE id = $1`, id).Scan(&l.owner, &l.until))
	return l
}

func (l lease) is(owner string, until time.Time) bool {
	return l.owner != nil && *l.owner == owner && l.until != nil && *l.until == until.UnixNano()
}

// TestOptionsRejected: names and leases out of bounds are refused, with
// ErrInvalidConfig, before any connection.
func TestOptionsRejected(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]postgres.Options{
		"space":        {Replica: "a b"},
		"control":      {Replica: "a\nb"},
		"non-ASCII":    {Replica: "réplica"},
		"too long":     {Replica: strings.Repeat("r", postgres.MaxReplicaLen+1)},
		"short lease":  {Lease: postgres.MinLease - 1},
		"long lease":   {Lease: postgres.MaxLease + 1},
		"negative":     {Lease: -time.Second},
		"negative max": {MaxConns: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := postgres.Open(ctx, "postgres://127.0.0.1:1/none", ledger.Config{MaxQueue: 1}, opts)
			require.ErrorIs(t, err, ledger.ErrInvalidConfig)
		})
	}
}

// TestLeaseFollowsTheJob: TakeRequest and Start give the job a lease of
// their replica, Options.Lease from the store's time; a renewal moves it
// on; an end clears it, and a renewal after the end gives none back.
func TestLeaseFollowsTheJob(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	clock := newFakeClock()
	const leaseA, leaseB = time.Hour, 2 * time.Hour // the keepers never tick in the test
	a := openReplica(t, dsn, "a", clock, leaseA)
	b := openReplica(t, dsn, "b", clock, leaseB)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	require.Equal(t, lease{}, readLease(t, dsn, id), "a PENDING job not taken holds no lease")

	_, err = a.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.True(t, readLease(t, dsn, id).is("a", clock.Now().Add(leaseA)), "taken by a")

	clock.Advance(time.Minute)
	_, err = b.Start(ctx, id)
	require.NoError(t, err)
	require.True(t, readLease(t, dsn, id).is("b", clock.Now().Add(leaseB)), "started by b")

	clock.Advance(time.Minute)
	require.NoError(t, a.Renew(ctx))
	require.True(t, readLease(t, dsn, id).is("b", clock.Now().Add(leaseB-time.Minute)), "a renews only its own")
	require.NoError(t, b.Renew(ctx))
	require.True(t, readLease(t, dsn, id).is("b", clock.Now().Add(leaseB)), "b renews its own")

	_, err = b.Finish(ctx, id, []byte("res"))
	require.NoError(t, err)
	require.NoError(t, b.Renew(ctx))
	l := readLease(t, dsn, id)
	require.Nil(t, l.until, "an ended job holds no lease")
	require.Equal(t, "b", *l.owner, "the owner stays on record")
}
