package sqlite_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestEndedContextChangesNothing: a call whose context has already ended
// returns its error and queues nothing.
func TestEndedContextChangesNothing(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 2})
	id := toState(t, s, ledgertype.Pending)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	commits := s.WriteStats().Commits

	_, _, err := s.Submit(ended, ledger.Submission{TaskID: "t"}, nil)
	require.ErrorIs(t, err, context.Canceled)
	for _, c := range []func() error{
		func() error { return errOf(s.Start(ended, id)) },
		func() error { return errOf(s.Finish(ended, id, nil)) },
		func() error { return errOf(s.Fail(ended, id, errBoom)) },
		func() error { return errOf(s.Timeout(ended, id, errBoom)) },
		func() error { _, err := s.TakeRequest(ended, id); return err },
		func() error { _, err := s.State(ended, id); return err },
		func() error { _, _, err := s.Result(ended, id); return err },
	} {
		require.ErrorIs(t, c(), context.Canceled)
	}
	require.Equal(t, commits, s.WriteStats().Commits)
	require.Equal(t, 1, s.Stats().Depth)
	require.Equal(t, ledgertype.Pending, state(t, s, id))
	_, err = s.TakeRequest(ctx, id)
	require.NoError(t, err, "the refused take took nothing")
}

// TestContextEndsWhileQueued: a caller whose context ends while its write
// waits for the writer gets ctx.Err() at once. The write's outcome is
// unknown to it; here the writer finds the context ended before it starts
// the write, and skips it.
func TestContextEndsWhileQueued(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 2})
	id := toState(t, s, ledgertype.Running)
	release := stallWriter(t, s, e)
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- errOf(s.Finish(c, id, nil)) }()
	sqlite.AwaitWriter(t, s, 1, 1)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled, "the caller does not wait for the writer")
	release()
	// The writer has answered the skipped write once a later one returns.
	require.NoError(t, errOf(s.Start(ctx, mustSubmit(t, s, "later"))))
	require.Equal(t, ledgertype.Running, state(t, s, id), "skipped: its caller had gone")
	require.Zero(t, s.WriteStats().Backlog)
}

// TestClosed: every call after Close returns ErrClosed; Close is
// idempotent; the file is consistent and opens again.
func TestClosed(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	id := mustSubmit(t, s, "a")
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())

	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, nil)
	require.ErrorIs(t, err, ledger.ErrClosed)
	_, err = s.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed)
	for _, c := range []call{start, finish, fail, timeout} {
		require.ErrorIs(t, errOf(c(s, id)), ledger.ErrClosed)
	}
	_, err = s.State(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed)
	_, err = s.Snapshot(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed)
	_, err = s.Wait(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed)
	_, _, err = s.Result(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed)
	_, err = s.Recovered(ctx)
	require.ErrorIs(t, err, ledger.ErrClosed)
	require.Equal(t, 1, s.Stats().Depth, "Close changes nothing")

	s = e.open()
	require.Equal(t, ledgertype.Pending, state(t, s, id))
}

// TestCloseRefusesQueuedWrites: writes still queued when Close comes get
// ErrClosed; the batch in progress finishes.
func TestCloseRefusesQueuedWrites(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 4})
	id := toState(t, s, ledgertype.Running)
	unlock := e.holdWriteLock()
	inBatch := make(chan error, 1)
	go func() { inBatch <- errOf(s.Finish(ctx, id, nil)) }()
	sqlite.AwaitWriter(t, s, 1, 0)
	queued := make(chan error, 1)
	go func() {
		_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "queued"}, nil)
		queued <- err
	}()
	sqlite.AwaitWriter(t, s, 1, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for { // until Close has begun: Recovered answers at once
		if _, err := s.Recovered(ctx); errors.Is(err, ledger.ErrClosed) {
			break
		}
		runtime.Gosched()
	}
	_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "after"}, nil)
	require.ErrorIs(t, err, ledger.ErrClosed)
	unlock()
	require.NoError(t, <-inBatch, "the batch in progress commits")
	require.ErrorIs(t, <-queued, ledger.ErrClosed)
	require.NoError(t, <-closed)
}
