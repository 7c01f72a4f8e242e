package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestClaimOldestFirst: Claim takes and starts the oldest claimable job,
// under its replica's lease, with its request; a job claimed by one
// replica is not claimable by another, nor one whose request was taken;
// ErrNoWork when none is left.
func TestClaimOldestFirst(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, time.Hour)
	b := openReplica(t, dsn, "b", clock, time.Hour)
	var ids []string
	for i := range 3 {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, fmt.Appendf(nil, "req%d", i))
		require.NoError(t, err)
		ids = append(ids, id)
		clock.Advance(time.Second)
	}
	_, err := a.TakeRequest(ctx, ids[1])
	require.NoError(t, err)

	snap, req, err := a.Claim(ctx)
	require.NoError(t, err)
	require.Equal(t, ids[0], snap.ID)
	require.Equal(t, "req0", string(req))
	require.Equal(t, ledgertype.Running, snap.State)
	require.Equal(t, clock.Now(), snap.StartedAt)
	require.True(t, readLease(t, dsn, ids[0]).is("a", clock.Now().Add(time.Hour)))

	snap, req, err = b.Claim(ctx)
	require.NoError(t, err)
	require.Equal(t, ids[2], snap.ID, "a's claim and a's take are not b's to claim")
	require.Equal(t, "req2", string(req))
	require.True(t, readLease(t, dsn, ids[2]).is("b", clock.Now().Add(time.Hour)))

	_, _, err = b.Claim(ctx)
	require.ErrorIs(t, err, ledger.ErrNoWork)
	_, err = a.TakeRequest(ctx, ids[0])
	require.ErrorIs(t, err, ledger.ErrRequestTaken, "a claimed job's request is taken")
	_, err = b.Start(ctx, ids[2])
	require.ErrorIs(t, err, ledger.ErrNotPending)
	for _, id := range ids {
		_, err := b.Finish(ctx, id, nil)
		require.NoError(t, err)
	}
}

// TestClaimDisjointAcrossStores: claimers racing on two replicas claim
// every job exactly once between them.
func TestClaimDisjointAcrossStores(t *testing.T) {
	t.Parallel()
	const jobs, claimers = 60, 8
	dsn := newDatabase(t)
	a := openReplica(t, dsn, "a", nil, 0)
	b := openReplica(t, dsn, "b", nil, 0)
	s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: jobs}, postgres.Options{Replica: "admit"})
	require.NoError(t, err)
	defer s.Close()
	want := map[string]string{}
	for i := range jobs {
		req := fmt.Sprintf("req%d", i)
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte(req))
		require.NoError(t, err)
		want[id] = req
	}
	var (
		mu  sync.Mutex
		got = map[string]string{}
		wg  sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range claimers {
		st := []*postgres.Store{a, b}[i%2]
		wg.Go(func() {
			<-start
			for range jobs { // bounded: at most every job
				snap, req, err := st.Claim(ctx)
				if errors.Is(err, ledger.ErrNoWork) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, dup := got[snap.ID]; dup {
					t.Errorf("job %s claimed twice (%q, then %q)", snap.ID, prev, req)
				}
				got[snap.ID] = string(req)
				mu.Unlock()
				if _, err := st.Finish(ctx, snap.ID, req); err != nil {
					t.Error(err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	require.Equal(t, want, got)
	require.NoError(t, s.CheckInvariants())
}

// TestReapedJobNotClaimable: a job taken by a replica that died, ended by
// the reaper, is never claimed.
func TestReapedJobNotClaimable(t *testing.T) {
	t.Parallel()
	const lease = time.Hour
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, lease)
	b := openReplica(t, dsn, "b", clock, lease)
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	_, err = a.TakeRequest(ctx, id)
	require.NoError(t, err)
	clock.Advance(lease + time.Nanosecond)
	n, err := b.Reap(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, _, err = b.Claim(ctx)
	require.ErrorIs(t, err, ledger.ErrNoWork)
	_, _, err = a.Claim(ctx)
	require.ErrorIs(t, err, ledger.ErrNoWork)
}
