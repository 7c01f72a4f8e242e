package jobapi_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
)

// TestOverview: the figures follow a job through its life: the depth and
// a busy worker while it runs, the counters once it ended; a store of one
// server reports no leases.
func TestOverview(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	o := h.srv.Overview()
	require.Equal(t, h.srv.Config().Workers, o.Workers)
	require.Equal(t, h.srv.Config().AsyncMaxQueue, o.MaxQueue)
	require.Zero(t, o.Busy+o.Depth+int(o.Submitted))

	id := h.submit("t", nil)
	<-g.started
	o = h.srv.Overview()
	require.Equal(t, 1, o.Busy)
	require.Equal(t, 1, o.Depth)
	require.Equal(t, uint64(1), o.Submitted)
	require.False(t, o.Shared)
	require.Empty(t, o.StoreError)

	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitBounded(id).State)
	o = h.srv.Overview()
	require.Equal(t, uint64(1), o.Done)
	require.Zero(t, o.Depth)
	require.Eventually(t, func() bool { return h.srv.Overview().Busy == 0 }, 10e9, 1e6, "the worker is given back")

	leases, err := h.srv.Leases(context.Background())
	require.NoError(t, err)
	require.Nil(t, leases)
}

// TestOverviewLeasesOnPostgres: on a shared PostgreSQL store, a running
// job is under its replica's lease, found through the store's codecs.
func TestOverviewLeasesOnPostgres(t *testing.T) {
	t.Parallel()
	g := newGate()
	a := pgReplicas(t)(t, "a", g, nil)
	id := a.submit("t", nil)
	<-g.started
	require.True(t, a.srv.Overview().Shared)
	leases, err := a.srv.Leases(context.Background())
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.Equal(t, "a", leases[0].Replica)
	require.Equal(t, 1, leases[0].Jobs)
	require.False(t, leases[0].Lapsed)
	g.release <- struct{}{}
	require.Equal(t, client.Done, a.waitBounded(id).State)
}
