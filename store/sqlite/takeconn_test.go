package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestTakeWaitingForAReaderStallsNoWrite: a TakeRequest waiting for a
// reader connection holds nothing the writer needs, so a Start, which
// looks at the take marks, commits while the reader pool is busy, and the
// invariant check reads beside the waiting take. (Regression: TakeRequest
// took takeMu and then waited for a connection under it; the writer takes
// takeMu for every Start, so a busy reader pool stalled group commit.) The
// deadline only bounds the failure: a Start that waits for the pool never
// returns while the pool is held.
func TestTakeWaitingForAReaderStallsNoWrite(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 2})
	taken := mustSubmit(t, s, "taken")
	started := mustSubmit(t, s, "started")

	release := sqlite.HoldReaders(t, s)
	took := make(chan error, 1)
	go func() {
		_, err := s.TakeRequest(ctx, taken)
		took <- err
	}()
	sqlite.AwaitReaderWaits(t, s, 1)

	bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	snap, err := s.Start(bounded, started)
	release()
	require.NoError(t, err, "Start while a take waits for a reader connection")
	require.Equal(t, ledgertype.Running, snap.State)
	require.NoError(t, <-took)
	checkInvariants(t, s)
}
