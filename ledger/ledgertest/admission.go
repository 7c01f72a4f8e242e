package ledgertest

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// testAdmissionZero: a MaxQueue of zero or less admits nothing.
func testAdmissionZero(t *testing.T, s Store) {
	for _, maxQueue := range []int{0, -1, math.MinInt32} {
		t.Run(strconv.Itoa(maxQueue), func(t *testing.T) {
			f := open(t, s, ledger.Config{MaxQueue: maxQueue})
			for range 3 {
				_, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "x"}, "req")
				require.ErrorIs(t, err, ledger.ErrQueueFull)
			}
			require.Equal(t, ledger.Stats{}, f.l.Stats())
		})
	}
}

// testAdmissionSerial: MaxQueue jobs are admitted and no more; starting a
// job frees nothing, ending one frees its slot.
func testAdmissionSerial(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	a := f.submit("a")
	f.submit("b")
	_, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "c"}, "req")
	require.ErrorIs(t, err, ledger.ErrQueueFull)

	f.must(f.l.Start(f.ctx, a))
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{TaskID: "c"}, "req")
	require.ErrorIs(t, err, ledger.ErrQueueFull, "starting a job frees no slot")

	f.must(f.l.Finish(f.ctx, a, "done"))
	f.submit("c")
	require.Equal(t, 2, f.depth())
}

// testAdmissionFreedOnce: a job's end frees exactly one slot, however
// many terminal calls follow it.
func testAdmissionFreedOnce(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	a := f.submit("a")
	f.must(f.l.Fail(f.ctx, a, errBoom))
	for _, o := range ops[1:] { // the refused terminal calls
		_, err := o.do(f, a)
		require.ErrorIs(t, err, ledger.ErrTerminal)
	}
	require.Equal(t, 0, f.depth())
	f.submit("b")
	_, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "c"}, "req")
	require.ErrorIs(t, err, ledger.ErrQueueFull, "the end freed one slot, not one per call")
	require.Equal(t, 1, f.depth())
}

// testAdmissionConcurrent releases many submitters at once against a
// small MaxQueue, round after round: exactly MaxQueue are admitted each
// round (a check of the bound apart from the taking of a slot would admit
// more), and ending them frees the bound again.
func testAdmissionConcurrent(t *testing.T, s Store) {
	const limit, submitters = 3, 16
	f := open(t, s, ledger.Config{MaxQueue: limit, MaxCompleted: 64})
	rounds := repeat(20, 3000, 300*time.Millisecond, func(round int) bool {
		var (
			start    = make(chan struct{})
			wg       sync.WaitGroup
			admitted atomic.Int32
			ids      = make(chan string, submitters)
		)
		for i := range submitters {
			wg.Go(func() {
				<-start
				id, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: strconv.Itoa(i)}, "req")
				switch {
				case err == nil:
					admitted.Add(1)
					ids <- id
				case !errors.Is(err, ledger.ErrQueueFull):
					t.Errorf("Submit: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(ids)
		require.EqualValues(t, limit, admitted.Load(), "round %d: admitted", round)
		require.Equal(t, limit, f.depth(), "round %d", round)
		for id := range ids {
			f.must(f.l.Fail(f.ctx, id, errBoom))
		}
		require.Equal(t, 0, f.depth(), "round %d", round)
		return true
	})
	t.Logf("%d rounds of %d submitters against MaxQueue %d", rounds, submitters, limit)
}

// testTerminalRace races every terminal call on one job, round after
// round: exactly one wins, the others are refused with the winner's
// snapshot, and the depth falls once.
func testTerminalRace(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1, MaxCompleted: 16})
	repeat(20, 1000, 200*time.Millisecond, func(round int) bool {
		id := f.submit("a")
		type outcome struct {
			snap ledger.Snapshot
			err  error
		}
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			out   = make(chan outcome, 2*len(ops[1:]))
		)
		for range 2 {
			for _, o := range ops[1:] {
				wg.Go(func() {
					<-start
					snap, err := o.do(f, id)
					out <- outcome{snap, err}
				})
			}
		}
		close(start)
		wg.Wait()
		close(out)
		var wins []ledger.Snapshot
		var refused []ledger.Snapshot
		for o := range out {
			switch {
			case o.err == nil:
				wins = append(wins, o.snap)
			case errors.Is(o.err, ledger.ErrTerminal):
				refused = append(refused, o.snap)
			default:
				t.Errorf("round %d: terminal call: %v", round, o.err)
			}
		}
		require.Len(t, wins, 1, "round %d: winners", round)
		for _, r := range refused {
			requireSame(t, wins[0], r, "round %d: a refused call returns the winner's snapshot", round)
		}
		require.Equal(t, 0, f.depth(), "round %d: the depth fell once", round)
		return true
	})
}
