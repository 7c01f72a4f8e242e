package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// call is one transition, as a function of the store and a job id.
type call func(*sqlite.Store, string) (ledger.Snapshot, error)

var (
	start   call = func(s *sqlite.Store, id string) (ledger.Snapshot, error) { return s.Start(ctx, id) }
	finish  call = func(s *sqlite.Store, id string) (ledger.Snapshot, error) { return s.Finish(ctx, id, []byte("r")) }
	fail    call = func(s *sqlite.Store, id string) (ledger.Snapshot, error) { return s.Fail(ctx, id, errBoom) }
	timeout call = func(s *sqlite.Store, id string) (ledger.Snapshot, error) { return s.Timeout(ctx, id, errBoom) }
)

// TestPayloadsAreCopied: the store keeps its own copy of a request and a
// result, so a caller may reuse its buffer once the call returned.
func TestPayloadsAreCopied(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	buf := []byte("request")
	id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, buf)
	require.NoError(t, err)
	copy(buf, "XXXXXXX")
	req, err := s.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "request", string(req))

	buf = []byte("result")
	_, err = s.Finish(ctx, id, buf)
	require.NoError(t, err)
	copy(buf, "XXXXXX")
	res, _, err := s.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "result", string(res))
}

// TestEmptyPayloads: an empty or nil request is handed out, empty, once; it
// is not mistaken for a released one.
func TestEmptyPayloads(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 2})
	for _, req := range [][]byte{nil, {}} {
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, req)
		require.NoError(t, err)
		got, err := s.TakeRequest(ctx, id)
		require.NoError(t, err)
		require.Empty(t, got)
		_, err = s.TakeRequest(ctx, id)
		require.ErrorIs(t, err, ledger.ErrRequestTaken)
		_, err = s.Finish(ctx, id, nil)
		require.NoError(t, err)
		res, _, err := s.Result(ctx, id)
		require.NoError(t, err)
		require.Empty(t, res)
	}
}
