package postgres_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestUnstorableText: strings PostgreSQL text cannot hold (invalid UTF-8,
// a NUL byte) get the contract's answers, never a database error.
// Regression: they reached the database and failed with SQLSTATE 22021,
// which a server answers 503, and an end's cause was lost.
func TestUnstorableText(t *testing.T) {
	t.Parallel()
	s, err := postgres.Open(ctx, newDatabase(t), ledger.Config{MaxQueue: 8}, postgres.Options{})
	require.NoError(t, err)
	defer s.Close()
	for _, bad := range []string{"\xff", "a\x00", "caf\xc3"} {
		_, _, err := s.Submit(ctx, ledger.Submission{TaskID: bad}, nil)
		require.ErrorIs(t, err, ledger.ErrUnstorable, "Submit(task %q)", bad)
		_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "t", Key: bad, Digest: "d"}, nil)
		require.ErrorIs(t, err, ledger.ErrUnstorable, "SubmitKeyed(key %q)", bad)
		_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "t", Key: "k", Digest: bad}, nil)
		require.ErrorIs(t, err, ledger.ErrUnstorable, "SubmitKeyed(digest %q)", bad)
	}
	require.Equal(t, 0, s.Stats().Depth, "nothing admitted")

	for _, c := range []struct{ cause, stored string }{
		{"a\x00b", "a\uFFFDb"},
		{"bad \xff\xfe byte", "bad \uFFFD byte"},
		{"ok é", "ok é"},
	} {
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, nil)
		require.NoError(t, err)
		snap, err := s.Fail(ctx, id, errors.New(c.cause))
		require.NoError(t, err, "Fail(%q)", c.cause)
		require.EqualError(t, snap.Err, c.stored)
		snap, err = s.Snapshot(ctx, id)
		require.NoError(t, err)
		require.EqualError(t, snap.Err, c.stored, "as read back")
		id, _, err = s.Submit(ctx, ledger.Submission{TaskID: "t"}, nil)
		require.NoError(t, err)
		snap, err = s.Timeout(ctx, id, errors.New(c.cause))
		require.NoError(t, err, "Timeout(%q)", c.cause)
		require.EqualError(t, snap.Err, c.stored)
	}
}
