package sqlite_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// TestConcurrentCloseWaitsForTheFirst: a Close called while another is
// still stopping the store returns only once the first has released the
// file, with its error, so that an Open right after it succeeds.
// (Regression: the second Close returned nil at once, and an Open after it
// found the file still locked.) The first Close is held up by a write the
// writer is stuck with in BEGIN; the second must not return while it is.
// A second Close that returned early is seen unless its goroutine does not
// run within the yields.
func TestConcurrentCloseWaitsForTheFirst(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 1})
	release := stallWriter(t, s, e)

	first := make(chan error, 1)
	go func() { first <- s.Close() }()
	for range 1_000_000 {
		if _, err := s.Recovered(ctx); err != nil {
			break // the first Close has begun
		}
		runtime.Gosched()
	}
	_, err := s.Recovered(ctx)
	require.ErrorIs(t, err, ledger.ErrClosed)

	type outcome struct{ closeErr, openErr error }
	second := make(chan outcome, 1)
	go func() {
		err := s.Close()
		second <- outcome{err, e.openErr()}
	}()
	for range 100_000 {
		select {
		case o := <-second:
			release()
			require.NoError(t, <-first)
			t.Fatalf("the second Close returned (%v) while the first was still stopping the writer; an Open then: %v", o.closeErr, o.openErr)
		default:
			runtime.Gosched()
		}
	}
	release()
	require.NoError(t, <-first)
	o := <-second
	require.NoError(t, o.closeErr)
	require.NoError(t, o.openErr, "an Open after the second Close finds the file free")
}
