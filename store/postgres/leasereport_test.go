package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// TestLeasesReport: Leases lists each replica that holds live jobs under a
// lease, with the first lapse, and says when one has lapsed; jobs not
// taken and jobs ended hold none.
func TestLeasesReport(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, time.Hour)
	b := openReplica(t, dsn, "b", clock, time.Hour)
	var ids []string
	for range 4 {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	report, err := b.Leases(ctx)
	require.NoError(t, err)
	require.Empty(t, report, "PENDING jobs nobody took hold no lease")

	start := clock.Now()
	_, _, err = a.Claim(ctx)
	require.NoError(t, err)
	clock.Advance(time.Minute)
	_, _, err = a.Claim(ctx)
	require.NoError(t, err)
	_, _, err = b.Claim(ctx)
	require.NoError(t, err)
	report, err = a.Leases(ctx)
	require.NoError(t, err)
	require.Equal(t, []ledger.ReplicaLeases{
		{Replica: "a", Jobs: 2, Next: start.Add(time.Hour)},
		{Replica: "b", Jobs: 1, Next: start.Add(time.Minute + time.Hour)},
	}, normal(report))

	clock.Advance(time.Hour - 30*time.Second) // a's first lease has lapsed
	report, err = b.Leases(ctx)
	require.NoError(t, err)
	require.True(t, report[0].Lapsed)
	require.False(t, report[1].Lapsed)

	for _, id := range ids {
		_, err := a.Fail(ctx, id, ledger.ErrNoCause)
		require.NoError(t, err)
	}
	report, err = a.Leases(ctx)
	require.NoError(t, err)
	require.Empty(t, report, "ended jobs hold no lease")
}

// normal is r with its times in UTC, to compare with the fake clock's.
func normal(r []ledger.ReplicaLeases) []ledger.ReplicaLeases {
	for i := range r {
		r[i].Next = r[i].Next.UTC()
	}
	return r
}
