package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestConformanceThreeReplicas runs the contract's suite on three Stores
// with distinct replica names on one database, each call of the suite
// going to the next replica in turn, so that consecutive calls on a job
// land on different replicas. The contract must
// hold for the ledger they share exactly as for one Store. Restart closes
// all three and opens them again, as a restart of the whole deployment.
//
// The leases are the longest allowed, so that no reaper or renewal runs
// while the suite moves its fake clock: reaping is tested on its own
// (reap_test.go), and here it would end jobs the suite means to run.
func TestConformanceThreeReplicas(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, reopenable(func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string] {
		r := &replicas{}
		for i := range 3 {
			s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{
				Replica: fmt.Sprintf("r%d", i+1),
				Lease:   postgres.MaxLease,
			})
			require.NoError(t, err)
			r.ls = append(r.ls, ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{}))
		}
		return r
	}))
}

// replicas is one ledger seen through three Stores on one database: each
// call goes to the next Store in turn (next, an atomic counter; ls is set
// before the value is shared, read-only afterwards).
type replicas struct {
	ls   []ledger.Ledger[string, string]
	next atomic.Uint64
}

var (
	_ ledger.Ledger[string, string] = (*replicas)(nil)
	_ ledger.Checker                = (*replicas)(nil)
	_ ledger.Recoverer              = (*replicas)(nil)
)

func (r *replicas) pick() ledger.Ledger[string, string] {
	return r.ls[(r.next.Add(1)-1)%uint64(len(r.ls))]
}

func (r *replicas) Submit(ctx context.Context, s ledger.Submission, req string) (string, bool, error) {
	return r.pick().Submit(ctx, s, req)
}

func (r *replicas) LookupKey(ctx context.Context, key string) (string, string, error) {
	return r.pick().LookupKey(ctx, key)
}

func (r *replicas) TakeRequest(ctx context.Context, id string) (string, error) {
	return r.pick().TakeRequest(ctx, id)
}

func (r *replicas) Start(ctx context.Context, id string) (ledger.Snapshot, error) {
	return r.pick().Start(ctx, id)
}

func (r *replicas) Finish(ctx context.Context, id, res string) (ledger.Snapshot, error) {
	return r.pick().Finish(ctx, id, res)
}

func (r *replicas) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return r.pick().Fail(ctx, id, cause)
}

func (r *replicas) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return r.pick().Timeout(ctx, id, cause)
}

func (r *replicas) State(ctx context.Context, id string) (ledger.State, error) {
	return r.pick().State(ctx, id)
}

func (r *replicas) Snapshot(ctx context.Context, id string) (ledger.Snapshot, error) {
	return r.pick().Snapshot(ctx, id)
}

func (r *replicas) Wait(ctx context.Context, id string) (ledger.Snapshot, error) {
	return r.pick().Wait(ctx, id)
}

func (r *replicas) Result(ctx context.Context, id string) (string, ledger.Snapshot, error) {
	return r.pick().Result(ctx, id)
}

func (r *replicas) List(ctx context.Context, q ledger.ListQuery) (ledger.Page, error) {
	return r.pick().List(ctx, q)
}

// Recovered is the last Store's: each Store releases only its own taken
// marks at Open and leaves out of its list the jobs another replica has
// taken, so the one opened last, after the others released theirs, lists
// every PENDING job.
func (r *replicas) Recovered(ctx context.Context) ([]ledger.Snapshot, error) {
	rec, _ := ledger.As[ledger.Recoverer](r.ls[len(r.ls)-1])
	return rec.Recovered(ctx)
}

// Stats reads the shared counts from one Store and adds up the evictions,
// which each Store counts for the Submits it ran.
func (r *replicas) Stats() ledger.Stats {
	st := r.ls[0].Stats()
	st.EvictedTTL, st.EvictedLRU = 0, 0
	for _, l := range r.ls {
		s := l.Stats()
		st.EvictedTTL += s.EvictedTTL
		st.EvictedLRU += s.EvictedLRU
	}
	return st
}

func (r *replicas) CheckInvariants() error {
	var errs []error
	for _, l := range r.ls {
		c, _ := ledger.As[ledger.Checker](l)
		errs = append(errs, c.CheckInvariants())
	}
	return errors.Join(errs...)
}

func (r *replicas) Close() error {
	var errs []error
	for _, l := range r.ls {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}
