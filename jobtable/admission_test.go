package jobtable_test

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
)

func TestZeroConfigAdmitsNothing(t *testing.T) {
	tab, err := jobtable.New[int, int](jobtable.Config{})
	require.NoError(t, err)
	_, err = tab.Submit("", 1)
	require.ErrorIs(t, err, jobtable.ErrQueueFull)
}

func TestConfigRejectsNonsense(t *testing.T) {
	_, err := jobtable.New[int, int](jobtable.Config{MaxQueue: math.MaxInt32 + 1})
	require.ErrorIs(t, err, jobtable.ErrInvalidConfig)
}

// TestAdmissionBoundConcurrent releases N submitters at once against a
// limit of M, round after round: exactly M are admitted each round (D3: a
// separate check and increment would admit more). The window of D3 as it
// would be written, with nothing between the check and the increment, is a
// few instructions wide: on two cores it showed in one round in a few
// hundred, so the test runs thousands of rounds (under a second).
func TestAdmissionBoundConcurrent(t *testing.T) {
	const limit, submitters, rounds = 3, 16, 5000
	tab, _ := newTable(t, jobtable.Config{MaxQueue: limit, MaxCompleted: -1, JobTTL: -1})
	for round := range rounds {
		var (
			start    = make(chan struct{})
			wg       sync.WaitGroup
			accepted atomic.Int32
			ids      = make(chan string, submitters)
		)
		for i := range submitters {
			wg.Go(func() {
				<-start
				id, err := tab.Submit(strconv.Itoa(i), req{})
				if err == nil {
					accepted.Add(1)
					ids <- id
					return
				}
				if err != jobtable.ErrQueueFull {
					t.Errorf("Submit: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(ids)
		require.EqualValues(t, limit, accepted.Load(), "round %d", round)
		require.Equal(t, limit, tab.Depth())
		for id := range ids {
			require.NoError(t, errOf(tab.Fail(id, errBoom)))
		}
		require.Equal(t, 0, tab.Depth())
	}
}

func TestDefaultIDsAreUniqueAndLong(t *testing.T) {
	tab, err := jobtable.New[int, int](jobtable.Config{MaxQueue: 1000})
	require.NoError(t, err)
	seen := map[string]bool{}
	for range 1000 {
		id, err := tab.Submit("", 0)
		require.NoError(t, err)
		require.False(t, seen[id], "duplicate id %q", id)
		seen[id] = true
		require.GreaterOrEqual(t, len(id)*5, 128, "base32 id %q carries at least 128 bits", id)
	}
}

func TestDuplicateIDFromInjectedSourcePanics(t *testing.T) {
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 3, NewID: func() string { return "same" }})
	mustSubmit(t, tab, "a")
	require.PanicsWithValue(t, `jobtable: Config.NewID returned duplicate id "same"`, func() {
		_, _ = tab.Submit("b", req{})
	})
	require.Equal(t, 1, tab.Depth(), "the refused admission is undone")
}

// TestSubmitPanicInInjectedClockUndoesAdmission pins the slot a Submit kept
// when an injected clock (or id source) panicked after admission: depth
// counted a job the table never held, and the queue shrank for good.
func TestSubmitPanicInInjectedClockUndoesAdmission(t *testing.T) {
	clock := fakeclock.New()
	var broken atomic.Bool
	tab, err := jobtable.New[req, string](jobtable.Config{
		MaxQueue: 1,
		Now: func() time.Time {
			if broken.Load() {
				panic("clock broken")
			}
			return clock.Now()
		},
		NewID: fakeclock.Seq("j"),
	})
	require.NoError(t, err)
	t.Cleanup(func() { checkInvariants(t, tab) })

	broken.Store(true)
	require.PanicsWithValue(t, "clock broken", func() { _, _ = tab.Submit("a", req{}) })
	require.Equal(t, 0, tab.Depth(), "the admission is undone")
	require.Equal(t, 0, tab.Len())
	checkInvariants(t, tab)

	broken.Store(false)
	_, err = tab.Submit("b", req{})
	require.NoError(t, err, "the slot is free again")
}
