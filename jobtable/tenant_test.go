package jobtable_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
)

func submitAs(tab *table, tenant string, bound int, key string) (string, bool, error) {
	return tab.SubmitWith(jobtable.Submission{TaskID: tenant, Tenant: tenant, TenantMaxQueue: bound, Key: key, Digest: "d"}, req{})
}

// TestTenantBound: a tenant at its bound is refused with its own error
// while another tenant is still admitted, and the ledger's bound is kept.
func TestTenantBound(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 3})
	a1, _, err := submitAs(tab, "a", 2, "")
	require.NoError(t, err)
	_, _, err = submitAs(tab, "a", 2, "")
	require.NoError(t, err)
	_, _, err = submitAs(tab, "a", 2, "")
	require.ErrorIs(t, err, jobtable.ErrTenantQueueFull)
	_, _, err = submitAs(tab, "a", 2, "k")
	require.ErrorIs(t, err, jobtable.ErrTenantQueueFull)
	_, _, err = submitAs(tab, "b", 2, "")
	require.NoError(t, err)
	_, _, err = submitAs(tab, "b", 2, "")
	require.ErrorIs(t, err, jobtable.ErrQueueFull, "the ledger is full")
	require.Equal(t, 2, tab.TenantDepth("a"))
	require.Equal(t, 1, tab.TenantDepth("b"))

	require.NoError(t, errOf(tab.Fail(a1, nil)))
	require.Equal(t, 1, tab.TenantDepth("a"))
	_, _, err = submitAs(tab, "a", 2, "")
	require.NoError(t, err)
	checkInvariants(t, tab)
}

// TestTenantOwnsJob: the snapshot and List name the tenant; Tenant finds it.
func TestTenantOwnsJob(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 4})
	id, _, err := submitAs(tab, "a", 0, "")
	require.NoError(t, err)
	other := mustSubmit(t, tab, "x")
	snap, err := tab.Snapshot(id)
	require.NoError(t, err)
	require.Equal(t, "a", snap.Tenant)
	owner, ok := tab.Tenant(other)
	require.True(t, ok)
	require.Empty(t, owner)
	_, ok = tab.Tenant("nope")
	require.False(t, ok)
	jobs, _, err := tab.List(jobtable.ListQuery{ByTenant: true, Tenant: "a"})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, id, jobs[0].ID)
	checkInvariants(t, tab)
}

// TestTenantKeys: two tenants may hold the same idempotency key.
func TestTenantKeys(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 4})
	a, replayed, err := submitAs(tab, "a", 0, "k")
	require.NoError(t, err)
	require.False(t, replayed)
	b, replayed, err := submitAs(tab, "b", 0, "k")
	require.NoError(t, err)
	require.False(t, replayed)
	require.NotEqual(t, a, b)
	again, replayed, err := submitAs(tab, "a", 0, "k")
	require.NoError(t, err)
	require.True(t, replayed)
	require.Equal(t, a, again)
	held, _, err := tab.LookupKey("b", "k")
	require.NoError(t, err)
	require.Equal(t, b, held)
	_, _, err = tab.LookupKey("", "k")
	require.ErrorIs(t, err, jobtable.ErrNotFound)
	checkInvariants(t, tab)
}

// TestTenantBoundConcurrent releases submitters of two tenants at once,
// round after round, against tenant bounds well below MaxQueue: each
// tenant gets exactly its bound, and its count matches its live jobs. A check of a tenant's room apart
// from the admission that counts the job admits more; its window is a few
// instructions wide, hence the thousands of rounds.
func TestTenantBoundConcurrent(t *testing.T) {
	const bound, maxQueue, submitters, rounds = 2, 8, 16, 3000
	tab, _ := newTable(t, jobtable.Config{MaxQueue: maxQueue, MaxCompleted: -1, JobTTL: -1})
	for round := range rounds {
		var (
			start    = make(chan struct{})
			wg       sync.WaitGroup
			mu       sync.Mutex
			admitted = map[string][]string{}
		)
		for i := range submitters {
			tenant := fmt.Sprint("t", i%2)
			wg.Go(func() {
				<-start
				key := ""
				if i%4 == 0 {
					key = fmt.Sprint("k", round, "-", i)
				}
				id, _, err := submitAs(tab, tenant, bound, key)
				switch {
				case err == nil:
					mu.Lock()
					admitted[tenant] = append(admitted[tenant], id)
					mu.Unlock()
				case !errors.Is(err, jobtable.ErrQueueFull) && !errors.Is(err, jobtable.ErrTenantQueueFull):
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		total := 0
		for tenant, ids := range admitted {
			require.LessOrEqual(t, len(ids), bound, "round %d: tenant %s over its bound", round, tenant)
			require.Equal(t, len(ids), tab.TenantDepth(tenant))
			total += len(ids)
		}
		require.Equal(t, 2*bound, total, "round %d", round)
		require.Equal(t, total, tab.Depth())
		for _, ids := range admitted {
			for _, id := range ids {
				require.NoError(t, errOf(tab.Fail(id, nil)))
			}
		}
	}
	checkInvariants(t, tab)
}
