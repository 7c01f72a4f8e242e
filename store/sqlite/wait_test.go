package sqlite_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

type waitResult struct {
	snap ledger.Snapshot
	err  error
}

// waitAsync starts a Wait and returns the channel its result arrives on. The
// test reads it before returning, so the goroutine never outlives it.
func waitAsync(ctx context.Context, s *sqlite.Store, id string) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		snap, err := s.Wait(ctx, id)
		out <- waitResult{snap, err}
	}()
	return out
}

// TestWaitReturnsOnClose: after Close no completion can come, so a blocked
// Wait returns ErrClosed at once, with the latest snapshot.
func TestWaitReturnsOnClose(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	id := toState(t, s, ledgertype.Running)
	got := waitAsync(ctx, s, id)
	sqlite.AwaitWaiter(t, s, id)
	require.NoError(t, s.Close())
	r := <-got
	require.ErrorIs(t, r.err, ledger.ErrClosed)
	require.Equal(t, id, r.snap.ID)
}
