package sqlite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestWriteTooLarge: a write that carries more than Options.MaxValueBytes
// is refused with ErrTooLarge before it is queued, and changes nothing;
// one within it is stored whole.
func TestWriteTooLarge(t *testing.T) {
	const limit = 64
	e := newEnv(t, ledger.Config{MaxQueue: 4})
	e.opts.MaxValueBytes = limit
	s := e.open()
	id := toState(t, s, ledgertype.Running)
	big := strings.Repeat("x", limit+1) // over the limit alone
	for name, write := range map[string]func() error{
		"Submit request": func() error { _, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte(big)); return err },
		"Submit task id": func() error { _, _, err := s.Submit(ctx, ledger.Submission{TaskID: big}, nil); return err },
		"Submit key": func() error {
			_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t", Key: big, Digest: "d"}, nil)
			return err
		},
		"Submit digest": func() error {
			_, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t", Key: "k", Digest: big}, nil)
			return err
		},
		"Finish result": func() error { return errOf(s.Finish(ctx, id, []byte(big))) },
		"Fail cause":    func() error { return errOf(s.Fail(ctx, id, errors.New(big))) },
		"Timeout cause": func() error { return errOf(s.Timeout(ctx, id, errors.New(big))) },
	} {
		require.ErrorIs(t, write(), sqlite.ErrTooLarge, name)
	}
	for name, write := range map[string]func() error{
		"Start":   func() error { return errOf(s.Start(ctx, big)) },
		"Finish":  func() error { return errOf(s.Finish(ctx, big, nil)) },
		"Fail":    func() error { return errOf(s.Fail(ctx, big, nil)) },
		"Timeout": func() error { return errOf(s.Timeout(ctx, big, nil)) },
	} {
		require.ErrorIs(t, write(), ledger.ErrNotFound, "%s of an id over the limit: no job has one", name)
	}
	require.Equal(t, ledgertype.Running, state(t, s, id))
	require.Equal(t, 1, s.Stats().Jobs)
	require.Equal(t, sqlite.WriteStats{Commits: 2, Writes: 2}, s.WriteStats(), "nothing was queued")

	// The limit counts the id (j2), the task id and the request together.
	req := []byte(strings.Repeat("r", limit-len("j2")-len("t")))
	fits, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, req)
	require.NoError(t, err)
	got, err := s.TakeRequest(ctx, fits)
	require.NoError(t, err)
	require.Equal(t, req, got)
}

// TestTooLargeFailsNoBatch: a write too large for SQLite, queued behind a
// stalled writer with another job's Finish, is refused alone; the Finish
// commits. (Regression: nothing bounded a value, so one over SQLite's
// limit reached the batch, SQLite refused it, and the whole batch failed:
// the other job's Finish with it, which jobapi then recorded FAILED.)
// SQLite's limit is lowered so that the test allocates little.
func TestTooLargeFailsNoBatch(t *testing.T) {
	const sqliteLimit = 1000
	e := newEnv(t, ledger.Config{MaxQueue: 4})
	e.opts.MaxValueBytes = sqliteLimit / 4
	s := e.open()
	sqlite.LimitLength(t, s, sqliteLimit)
	a := toState(t, s, ledgertype.Running)
	b := toState(t, s, ledgertype.Running)

	release := stallWriter(t, s, e)
	done := make(chan error, 1)
	go func() { done <- errOf(s.Finish(ctx, a, []byte("small"))) }()
	sqlite.AwaitWriter(t, s, 1, 1)
	_, err := s.Finish(ctx, b, make([]byte, 2*sqliteLimit))
	require.ErrorIs(t, err, sqlite.ErrTooLarge)
	release()
	require.NoError(t, <-done, "the other write of the batch")
	require.Equal(t, ledgertype.Done, state(t, s, a))
	require.Equal(t, ledgertype.Running, state(t, s, b))
}

func TestMaxValueBytesRange(t *testing.T) {
	for _, n := range []int{-1, sqlite.MaxValueBytes + 1} {
		_, err := sqlite.Open(ctx, t.TempDir()+"/jobs.db", ledger.Config{MaxQueue: 1}, sqlite.Options{MaxValueBytes: n})
		require.ErrorIs(t, err, ledger.ErrInvalidConfig, n)
	}
}
