package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// requireWork waits for a signal on s's Work channel.
func requireWork(t *testing.T, s *postgres.Store, why string) {
	t.Helper()
	select {
	case <-s.Work():
	case <-time.After(10 * time.Second):
		t.Fatalf("no Work signal: %s", why)
	}
}

// TestWorkSignals: Work holds a signal from Open on, and signals again on
// an admission on another replica; signals coalesce.
func TestWorkSignals(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openReplica(t, dsn, "a", nil, time.Hour)
	b := openReplica(t, dsn, "b", nil, time.Hour)
	requireWork(t, b, "the one from Open")
	for range 3 {
		_, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
		require.NoError(t, err)
	}
	requireWork(t, b, "admissions on a")
	claimed, _, err := b.Claim(ctx)
	require.NoError(t, err)
	_, err = b.Finish(ctx, claimed.ID, nil)
	require.NoError(t, err)
}

// TestRestartSignalsWork: a restart that releases the requests its earlier
// life had taken signals Work on the other replicas, whose claimers sleep
// until told: without it the released job waits for the next admission.
// Every earlier signal is taken first, so only the restart's can answer.
func TestRestartSignalsWork(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	a := openReplica(t, dsn, "a", nil, time.Hour)
	b := openReplica(t, dsn, "b", nil, time.Hour)
	requireWork(t, b, "the one from Open")
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	requireWork(t, b, "the admission on a") // its one notification
	_, err = a.TakeRequest(ctx, id)
	require.NoError(t, err)
	select {
	case <-b.Work():
		t.Fatal("a Work signal with nothing new to claim")
	default:
	}

	_ = openReplica(t, dsn, "a", nil, time.Hour) // releases a's take
	requireWork(t, b, "a's restart released a request")
	claimed, _, err := b.Claim(ctx)
	require.NoError(t, err)
	require.Equal(t, id, claimed.ID)
	_, err = b.Finish(ctx, id, nil)
	require.NoError(t, err)
}

// TestWorkAfterListenerReconnect: admissions whose notifications the
// listener missed while it was away are made up for by a signal once it
// listens again.
func TestWorkAfterListenerReconnect(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	lost := make(chan struct{}, 1)
	release := make(chan struct{})
	a, err := postgres.OpenWithReconnectHook(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{Replica: "a"}, func() {
		select {
		case lost <- struct{}{}:
		default:
		}
		<-release
	})
	require.NoError(t, err)
	defer a.Close()
	defer close(release)
	b := openReplica(t, dsn, "b", nil, 0)
	requireWork(t, a, "the one from Open")
	require.NoError(t, b.DropListener(ctx))
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not notice its connection end")
	}
	_, _, err = b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	release <- struct{}{}
	requireWork(t, a, "after the reconnect")
	snap, _, err := a.Claim(ctx)
	require.NoError(t, err)
	_, err = a.Finish(ctx, snap.ID, nil)
	require.NoError(t, err)
}

// TestOnEnd: a replica's OnEnd functions get the final snapshot of every
// end on any replica: a Finish on another, a reaped lease, an end whose
// snapshot is too big for a notification (read from the row).
func TestOnEnd(t *testing.T) {
	t.Parallel()
	const lease = time.Hour
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, lease)
	b := openReplica(t, dsn, "b", clock, lease)
	ends := make(chan ledger.Snapshot, 8)
	a.OnEnd(func(s ledger.Snapshot) { ends <- s })
	next := func() ledger.Snapshot {
		t.Helper()
		select {
		case s := <-ends:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("OnEnd was not called")
			return ledger.Snapshot{}
		}
	}
	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	want, err := b.Finish(ctx, id, []byte("res"))
	require.NoError(t, err)
	require.Equal(t, want, next(), "b's Finish")

	id, _, err = b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	_, err = b.Start(ctx, id)
	require.NoError(t, err)
	clock.Advance(lease + time.Nanosecond)
	n, err := a.Reap(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got := next()
	require.Equal(t, id, got.ID)
	require.EqualError(t, got.Err, postgres.WorkerLost, "the reaped job")

	id, _, err = b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	want, err = b.Fail(ctx, id, errors.New(strings.Repeat("x", 9000)))
	require.NoError(t, err)
	require.Equal(t, want, next(), "a snapshot too big for the notification")
}

// TestNow: the store's clock is Config.Now when set, else the database's,
// from which the snapshots' times come.
func TestNow(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	clock := newFakeClock()
	a := openReplica(t, dsn, "a", clock, 0)
	now, err := a.Now(ctx)
	require.NoError(t, err)
	require.Equal(t, clock.Now(), now)

	b := openReplica(t, dsn, "b", nil, 0)
	before, err := b.Now(ctx)
	require.NoError(t, err)
	id, _, err := b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	after, err := b.Now(ctx)
	require.NoError(t, err)
	snap, err := b.Snapshot(ctx, id)
	require.NoError(t, err)
	require.False(t, snap.CreatedAt.Before(before), "created %v, before %v", snap.CreatedAt, before)
	require.False(t, after.Before(snap.CreatedAt), "created %v, after %v", snap.CreatedAt, after)
	_, err = b.Fail(ctx, id, errors.New("done"))
	require.NoError(t, err)
}

// TestOnEndAfterListenerReconnect: an end committed while the listener is
// away, its notification lost, is reported to OnEnd once it listens
// again, and only once: the next report is the next end.
func TestOnEndAfterListenerReconnect(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	lost := make(chan struct{}, 1)
	release := make(chan struct{})
	a, err := postgres.OpenWithReconnectHook(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{Replica: "a"}, func() {
		select {
		case lost <- struct{}{}:
		default:
		}
		<-release
	})
	require.NoError(t, err)
	defer a.Close()
	defer close(release)
	ends := make(chan ledger.Snapshot, 8)
	a.OnEnd(func(s ledger.Snapshot) { ends <- s })
	next := func() ledger.Snapshot {
		t.Helper()
		select {
		case s := <-ends:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("OnEnd was not called")
			return ledger.Snapshot{}
		}
	}
	b := openReplica(t, dsn, "b", nil, 0)
	first, _, err := b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)
	second, _, err := b.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	require.NoError(t, err)

	require.NoError(t, b.DropListener(ctx))
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not notice its connection end")
	}
	want, err := b.Finish(ctx, first, []byte("res"))
	require.NoError(t, err)
	release <- struct{}{}
	require.Equal(t, want, next(), "the end missed while away")

	want, err = b.Fail(ctx, second, errors.New("boom"))
	require.NoError(t, err)
	require.Equal(t, want, next(), "the next end, with no repeat of the first")
}
