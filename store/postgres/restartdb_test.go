package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestDatabaseRestartLosesNoEnd: the ends of jobs whose work is done, in
// flight or queued while PostgreSQL restarts (a fast shutdown, which fails
// the sessions with 57P01, or an immediate one, which drops them, then a
// pause with connections refused), are tried again until the server is
// back, and every job ends DONE: none is failed for the restart, none
// ends twice.
// Regression: an end that failed once was given up, and the reaper ended
// its job FAILED a lease later.
func TestDatabaseRestartLosesNoEnd(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			srv := pgtest.Private(t)
			const jobs, workers = 24, 8
			s, err := postgres.Open(ctx, srv.DSN, ledger.Config{MaxQueue: jobs}, postgres.Options{Lease: 10 * time.Second})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			var ids []string
			for range jobs {
				id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
				require.NoError(t, err)
				ids = append(ids, id)
			}
			claimed := make(chan string, jobs)
			for range jobs {
				snap, _, err := s.Claim(ctx)
				require.NoError(t, err)
				claimed <- snap.ID
			}
			close(claimed)

			holdLedger(t, srv.DSN) // the first batch of ends waits on the server
			var wg sync.WaitGroup
			defer wg.Wait() // on every path: the ends give up within the lease
			for range workers {
				wg.Go(func() {
					for id := range claimed {
						if _, err := s.Finish(ctx, id, []byte("res")); err != nil {
							t.Errorf("Finish(%s): %v", id, err)
						}
					}
				})
			}
			awaitLockWaiter(t, srv.DSN)
			require.NoError(t, srv.Restart(mode, 2*time.Second))
			wg.Wait()
			for _, id := range ids {
				snap, err := s.Snapshot(ctx, id)
				require.NoError(t, err)
				require.Equal(t, ledgertype.Done, snap.State, "job %s: %v", id, snap.Err)
			}
			require.Equal(t, 0, s.Stats().Depth)
			require.NoError(t, s.CheckInvariants())
		})
	}
}
