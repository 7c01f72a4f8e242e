package sqlite_test

import (
	"math"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

func TestMaxQueueZeroOrNegativeAdmitsNothing(t *testing.T) {
	for _, maxQueue := range []int{0, -1, math.MinInt} {
		t.Run(strconv.Itoa(maxQueue), func(t *testing.T) {
			s, _ := newStore(t, ledger.Config{MaxQueue: maxQueue})
			for range 3 {
				_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "x"}, nil)
				require.ErrorIs(t, err, ledger.ErrQueueFull)
			}
			require.Equal(t, ledger.Stats{}, s.Stats())
			require.Zero(t, s.WriteStats().Commits, "a refusal commits nothing")
		})
	}
}

func TestInvalidConfig(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: math.MaxInt32 + 1})
	_, err := sqlite.Open(ctx, e.path, e.cfg, sqlite.Options{})
	require.ErrorIs(t, err, ledger.ErrInvalidConfig)
	_, err = sqlite.Open(ctx, e.path, ledger.Config{}, sqlite.Options{BatchLimit: -1})
	require.ErrorIs(t, err, ledger.ErrInvalidConfig)
	require.NoFileExists(t, e.path, "an invalid config creates nothing")
}

// TestAdmissionBoundConcurrent releases many submitters at once against a
// limit, round after round, and with every batch size: exactly the limit
// is admitted each round. The writer is the only one to check and take a
// slot, so this holds by construction; the test pins it against a change
// that would move admission out of the writer (a depth checked by the
// caller and taken by the writer would admit more).
func TestAdmissionBoundConcurrent(t *testing.T) {
	const limit, submitters, rounds = 5, 32, 8
	for _, batch := range []int{1, 4, sqlite.DefaultBatchLimit} {
		t.Run("batch="+strconv.Itoa(batch), func(t *testing.T) {
			e := newEnv(t, ledger.Config{MaxQueue: limit, MaxCompleted: -1, JobTTL: -1})
			e.opts.BatchLimit = batch
			s := e.open()
			for round := range rounds {
				var (
					start = make(chan struct{})
					wg    sync.WaitGroup
					ids   = make(chan string, submitters)
				)
				for i := range submitters {
					wg.Go(func() {
						<-start
						id, _, err := s.Submit(ctx, ledger.Submission{TaskID: strconv.Itoa(i)}, nil)
						switch {
						case err == nil:
							ids <- id
						case !errorIsQueueFull(err):
							t.Errorf("Submit: %v", err)
						}
					})
				}
				close(start)
				wg.Wait()
				close(ids)
				require.Len(t, ids, limit, "round %d", round)
				require.Equal(t, limit, s.Stats().Depth)
				checkInvariants(t, s)
				for id := range ids {
					require.NoError(t, errOf(s.Fail(ctx, id, errBoom)))
				}
			}
		})
	}
}

func errorIsQueueFull(err error) bool { return err == ledger.ErrQueueFull }
