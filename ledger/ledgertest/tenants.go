package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The rules of tenants: a job belongs to the tenant that submitted it; a
// call scoped to another tenant sees it as an id no job has; keys are
// each tenant's own; and a tenant's bound and the ledger's are both kept.

// submitAs admits a job of tenant, held to bound, failing the test on an
// error.
func (f *fixture) submitAs(tenant string, bound int, key string) string {
	f.t.Helper()
	id, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: tenant, Tenant: tenant, TenantMaxQueue: bound,
		Key: key, Digest: "d"}, payload(tenant))
	require.NoError(f.t, err, "Submit(tenant %q)", tenant)
	return id
}

// requireTenantDepth checks a TenantCounter's count of tenant's live jobs;
// a store that is none is not checked.
func (f *fixture) requireTenantDepth(tenant string, want int) {
	f.t.Helper()
	c, ok := ledger.As[ledger.TenantCounter](f.l)
	if !ok {
		return
	}
	got, err := c.TenantDepth(f.ctx, tenant)
	require.NoError(f.t, err)
	require.Equal(f.t, want, got, "TenantDepth(%q)", tenant)
}

// answers is every answer a call that names a job gives, with its error
// as text: what a caller can compare.
func answers(ctx context.Context, l ledger.Ledger[string, string], id string) []string {
	var out []string
	add := func(v any, err error) { out = append(out, fmt.Sprintf("%+v %v", v, err)) }
	add(l.State(ctx, id))
	add(l.Snapshot(ctx, id))
	// A Wait on an id no job has, or one the caller must not see, returns
	// at once; the bound only ends the Wait of a store that shows the job.
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	add(l.Wait(wctx, id))
	cancel()
	res, snap, err := l.Result(ctx, id)
	add(fmt.Sprint(res, snap), err)
	add(l.TakeRequest(ctx, id))
	add(l.Start(ctx, id))
	add(l.Finish(ctx, id, "x"))
	add(l.Fail(ctx, id, errBoom))
	add(l.Timeout(ctx, id, errBoom))
	return out
}

// testTenantHidden: every call that names a job of tenant a, scoped to
// tenant b, answers exactly as for an id that no job has, and changes
// nothing; List scoped to b does not list it. Scoped to a, or unscoped,
// the job is there.
func testTenantHidden(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	id := f.submitAs("a", 0, "")
	done := f.submitAs("a", 0, "")
	f.must(f.l.Start(f.ctx, done))
	f.must(f.l.Finish(f.ctx, done, "result"))
	other := f.submitAs("b", 0, "")
	asB := ledger.WithTenant(f.ctx, "b")
	unknown := answers(asB, f.l, "no-such-job")
	require.Equal(t, unknown, answers(asB, f.l, id), "a live job of another tenant")
	require.Equal(t, unknown, answers(asB, f.l, done), "a DONE job of another tenant")
	for _, a := range unknown {
		require.Contains(t, a, ledger.ErrNotFound.Error())
	}
	snap := f.snapshot(id)
	require.Equal(t, ledgertype.Pending, snap.State, "the hidden job is untouched")
	require.Equal(t, "a", snap.Tenant)
	require.Equal(t, 2, f.depth())
	req, err := f.l.TakeRequest(ledger.WithTenant(f.ctx, "a"), id)
	require.NoError(t, err, "its own tenant takes it")
	require.Equal(t, payload("a"), req)

	page, err := f.l.List(asB, ledger.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, other, page.Jobs[0].ID)
	page, err = f.l.List(ledger.WithTenant(f.ctx, "a"), ledger.ListQuery{ByState: true, State: ledgertype.Done})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, done, page.Jobs[0].ID)
	page, err = f.l.List(f.ctx, ledger.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 3, "unscoped, every job")
	page, err = f.l.List(ledger.WithTenant(f.ctx, "nobody"), ledger.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Jobs)
	require.Empty(t, page.Next)
}

// testTenantKeys: two tenants may use one key, each for a job of its own;
// a replay and LookupKey find only the tenant's own.
func testTenantKeys(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	a := f.submitAs("a", 0, "k")
	b := f.submitAs("b", 0, "k")
	require.NotEqual(t, a, b, "one key, two tenants, two jobs")
	id, replayed, err := f.l.Submit(f.ctx, ledger.Submission{Tenant: "b", Key: "k", Digest: "d"}, "again")
	require.NoError(t, err)
	require.True(t, replayed)
	require.Equal(t, b, id)
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{Tenant: "a", Key: "k", Digest: "other"}, "again")
	require.ErrorIs(t, err, ledger.ErrKeyConflict)
	for tenant, want := range map[string]string{"a": a, "b": b} {
		got, _, err := f.l.LookupKey(f.ctx, tenant, "k")
		require.NoError(t, err)
		require.Equal(t, want, got, "tenant %s", tenant)
	}
	_, _, err = f.l.LookupKey(f.ctx, "", "k")
	require.ErrorIs(t, err, ledger.ErrNotFound, "the key is no key of tenant \"\"")
	require.Equal(t, 2, f.depth())
}

// testTenantBound: a tenant at its bound is refused with
// ErrTenantQueueFull while another is admitted; the ledger's own bound is
// ErrQueueFull; a replay takes no slot of either; an end frees the slot.
func testTenantBound(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 3})
	a := f.submitAs("a", 2, "k")
	f.submitAs("a", 2, "")
	_, _, err := f.l.Submit(f.ctx, ledger.Submission{Tenant: "a", TenantMaxQueue: 2}, "over")
	require.ErrorIs(t, err, ledger.ErrTenantQueueFull)
	id, replayed, err := f.l.Submit(f.ctx, ledger.Submission{Tenant: "a", TenantMaxQueue: 2, Key: "k", Digest: "d"}, "again")
	require.NoError(t, err, "a replay at the bound")
	require.True(t, replayed)
	require.Equal(t, a, id)
	f.submitAs("b", 2, "")
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{Tenant: "b", TenantMaxQueue: 2}, "over")
	require.ErrorIs(t, err, ledger.ErrQueueFull, "the ledger is full")
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{Tenant: "a", TenantMaxQueue: 2}, "over")
	require.ErrorIs(t, err, ledger.ErrTenantQueueFull, "the tenant's bound is checked first")
	require.Equal(t, 3, f.depth())

	f.requireTenantDepth("a", 2)
	f.requireTenantDepth("b", 1)
	f.requireTenantDepth("c", 0)

	f.must(f.l.Fail(f.ctx, a, errBoom))
	f.requireTenantDepth("a", 1)
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{Tenant: "b", TenantMaxQueue: 1}, "over")
	require.ErrorIs(t, err, ledger.ErrTenantQueueFull, "b has 1 live job")
	f.submitAs("a", 2, "")
	require.Equal(t, 3, f.depth())
}

// testTenantBoundRace releases submitters of three tenants at once, round
// after round, against tenant bounds whose sum exceeds MaxQueue: no
// tenant is ever admitted over its bound, the ledger never over its own,
// and each refusal names the bound that was full. A check of either
// bound apart from its count admits more.
func testTenantBoundRace(t *testing.T, s Store) {
	const limit, bound, tenants, submitters = 5, 2, 3, 18
	f := open(t, s, ledger.Config{MaxQueue: limit, MaxCompleted: 64})
	rounds := repeat(10, 2000, 300*time.Millisecond, func(round int) bool {
		var (
			start    = make(chan struct{})
			wg       sync.WaitGroup
			mu       sync.Mutex
			admitted = map[string][]string{}
		)
		for i := range submitters {
			tenant := fmt.Sprint("t", i%tenants)
			wg.Go(func() {
				<-start
				id, _, err := f.l.Submit(f.ctx, ledger.Submission{Tenant: tenant, TenantMaxQueue: bound}, "req")
				switch {
				case err == nil:
					mu.Lock()
					admitted[tenant] = append(admitted[tenant], id)
					mu.Unlock()
				case !errors.Is(err, ledger.ErrQueueFull) && !errors.Is(err, ledger.ErrTenantQueueFull):
					t.Errorf("Submit: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		total := 0
		for tenant, ids := range admitted {
			require.LessOrEqual(t, len(ids), bound, "round %d: tenant %s over its bound", round, tenant)
			total += len(ids)
		}
		require.Equal(t, limit, total, "round %d: admitted", round)
		require.Equal(t, limit, f.depth(), "round %d", round)
		for _, ids := range admitted {
			for _, id := range ids {
				f.must(f.l.Fail(f.ctx, id, errBoom))
			}
		}
		require.Equal(t, 0, f.depth(), "round %d", round)
		return true
	})
	t.Logf("%d rounds of %d submitters of %d tenants, bound %d each, MaxQueue %d", rounds, submitters, tenants, bound, limit)
}

// testTenantRestart: a job keeps its tenant across a restart, and the
// tenant's live jobs still count against its bound.
func testTenantRestart(t *testing.T, s Store) {
	if s.Restart == nil {
		t.Skip("the store does not survive a restart (Store.Restart is nil): nothing to check")
	}
	f := open(t, s, ledger.Config{MaxQueue: 8})
	a := f.submitAs("a", 2, "k")
	f.submitAs("a", 2, "")
	f.restart()
	require.Equal(t, "a", f.snapshot(a).Tenant)
	_, err := f.l.Snapshot(ledger.WithTenant(f.ctx, "b"), a)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{Tenant: "a", TenantMaxQueue: 2}, "over")
	require.ErrorIs(t, err, ledger.ErrTenantQueueFull)
	got, _, err := f.l.LookupKey(f.ctx, "a", "k")
	require.NoError(t, err)
	require.Equal(t, a, got)
	f.must(f.l.Fail(f.ctx, a, errBoom))
	f.submitAs("a", 2, "")
}
