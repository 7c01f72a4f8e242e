package postgres_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// holdLedger locks the ledger row of dsn's database from a connection of
// its own, as a batch of another replica would, until the returned
// function is called (at the latest when t ends).
func holdLedger(t *testing.T, dsn string) (release func()) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM ledger WHERE id = 1 FOR UPDATE`)
	require.NoError(t, err)
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// awaitLockWaiter returns once a session of dsn's database waits for a
// lock: the writer's batch, queued behind holdLedger.
func awaitLockWaiter(t *testing.T, dsn string) {
	t.Helper()
	awaitLockWaiters(t, dsn, 1)
}

// awaitLockWaiters returns once n sessions of dsn's database wait for a
// lock.
func awaitLockWaiters(t *testing.T, dsn string, n int) {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	waitLockWaiters(t, conn, n)
}

// awaitQueued returns once n writes wait for s's writer.
func awaitQueued(t *testing.T, s *postgres.Store, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Queued() == n }, 10*time.Second, time.Millisecond,
		"writes queued: want %d", n)
}

// admissions counts the answers of Submits, from any goroutine.
type admissions struct{ admitted, full atomic.Int64 }

// submit submits a job on s and counts its answer: admitted, or refused
// for a full queue; any other error fails t.
func (a *admissions) submit(t *testing.T, s *postgres.Store) {
	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("r"))
	switch {
	case err == nil:
		a.admitted.Add(1)
	case errors.Is(err, ledger.ErrQueueFull):
		a.full.Add(1)
	default:
		t.Error(err)
	}
}

// TestBatchAdmitsInOrder: the admissions of one batch are decided one by
// one against the bound, in the order they were queued: a batch of five
// Submits with room for two admits two and refuses three. Regression: a
// batch that checks the bound once for all its admissions admits all five.
func TestBatchAdmitsInOrder(t *testing.T) {
	t.Parallel()
	const maxQueue = 3
	dsn := newDatabase(t)
	s := openStore(t, dsn, ledger.Config{MaxQueue: maxQueue})
	release := holdLedger(t, dsn)

	var got admissions
	var wg sync.WaitGroup
	submit := func() { got.submit(t, s) }
	wg.Go(submit) // the first batch: one Submit, waiting for the row
	awaitLockWaiter(t, dsn)
	for range 5 {
		wg.Go(submit)
	}
	awaitQueued(t, s, 5) // the second batch, whole
	release()
	wg.Wait()
	require.Equal(t, int64(maxQueue), got.admitted.Load())
	require.Equal(t, int64(6-maxQueue), got.full.Load())
	require.Equal(t, maxQueue, s.Stats().Depth)
}

// TestBatchEndsAndAdmits: a batch that ends jobs and admits others frees
// the slots of its ends for its admissions, ends each job once though two
// ends of it were queued together, and notifies every end.
func TestBatchEndsAndAdmits(t *testing.T) {
	t.Parallel()
	const maxQueue = 2
	dsn := newDatabase(t)
	s := openStore(t, dsn, ledger.Config{MaxQueue: maxQueue})
	other := openStore(t, dsn, ledger.Config{MaxQueue: maxQueue})
	var ids []string
	for range maxQueue {
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("r"))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	waits := []<-chan waitResult{waitAsync(other, ids[0]), waitAsync(other, ids[1])}
	requireBlocked(t, other, waits[0])

	release := holdLedger(t, dsn)
	var wg sync.WaitGroup
	var finished, refused atomic.Int64
	wg.Go(func() { // the first batch
		if _, err := s.Finish(ctx, ids[0], []byte("a")); err != nil {
			t.Error(err)
		}
	})
	awaitLockWaiter(t, dsn)
	for range 2 { // the same end twice: one wins, one is refused
		wg.Go(func() {
			_, err := s.Finish(ctx, ids[1], []byte("b"))
			switch {
			case err == nil:
				finished.Add(1)
			case errors.Is(err, ledger.ErrTerminal):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	awaitQueued(t, s, 2)
	var admitted atomic.Int64
	for range 2 {
		wg.Go(func() {
			if _, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("r")); err == nil {
				admitted.Add(1)
			}
		})
	}
	awaitQueued(t, s, 4)
	release()
	wg.Wait()
	require.Equal(t, int64(1), finished.Load())
	require.Equal(t, int64(1), refused.Load())
	require.Equal(t, int64(2), admitted.Load(), "the ends freed both slots")
	require.Equal(t, maxQueue, s.Stats().Depth)
	for i, w := range waits {
		r := receive(t, w)
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.Done, r.snap.State, "job %d", i)
	}
}

// TestAdmissionWaitsForTheLedgerRow: two replicas' admissions queued
// behind a write that holds the ledger row are decided one after the
// other, each on the depth the other left: with room for one, one is
// admitted. Regression: a batch that reads the depth before it has the
// row's lock admits both.
func TestAdmissionWaitsForTheLedgerRow(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	stores := []*postgres.Store{
		openStore(t, dsn, ledger.Config{MaxQueue: 1}),
		openStore(t, dsn, ledger.Config{MaxQueue: 1}),
	}
	release := holdLedger(t, dsn)
	var got admissions
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() { got.submit(t, s) })
	}
	awaitLockWaiters(t, dsn, 2)
	release()
	wg.Wait()
	require.Equal(t, int64(1), got.admitted.Load())
	require.Equal(t, int64(1), got.full.Load())
	require.Equal(t, 1, stores[0].Stats().Depth)
}
