package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
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

// TestTransitions drives every transition from every state and checks the
// error, the state after, the snapshot returned and the depth, as jobtable's
// TestTransitions does on the memory store.
func TestTransitions(t *testing.T) {
	states := []ledger.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut}
	calls := []struct {
		name string
		do   call
		to   ledger.State
		err  func(from ledger.State) error
	}{
		{"Start", start, ledgertype.Running, func(from ledger.State) error {
			if from == ledgertype.Pending {
				return nil
			}
			return ledger.ErrNotPending
		}},
		{"Finish", finish, ledgertype.Done, endErr},
		{"Fail", fail, ledgertype.Failed, endErr},
		{"Timeout", timeout, ledgertype.TimedOut, endErr},
	}
	for _, from := range states {
		for _, c := range calls {
			t.Run(from.String()+"/"+c.name, func(t *testing.T) {
				s, _ := newStore(t, ledger.Config{MaxQueue: 1})
				id := toState(t, s, from)
				before, err := s.Snapshot(ctx, id)
				require.NoError(t, err)

				snap, err := c.do(s, id)
				want := c.err(from)
				if want != nil {
					require.ErrorIs(t, err, want)
					require.Equal(t, before, snap, "a refused transition returns the current snapshot")
					require.Equal(t, from, state(t, s, id), "and changes nothing")
				} else {
					require.NoError(t, err)
					require.Equal(t, c.to, snap.State)
					after, err := s.Snapshot(ctx, id)
					require.NoError(t, err)
					require.Equal(t, after, snap, "the returned snapshot is the committed one")
				}
				wantDepth := 1
				if (want == nil && c.to.Terminal()) || from.Terminal() {
					wantDepth = 0
				}
				require.Equal(t, wantDepth, s.Stats().Depth)
			})
		}
	}
}

func endErr(from ledger.State) error {
	if from.Terminal() {
		return ledger.ErrTerminal
	}
	return nil
}

// TestSecondTerminalCallIsNoOp: only the first terminal call counts; the
// depth falls once, and the job keeps the first outcome.
func TestSecondTerminalCallIsNoOp(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 2})
	id := toState(t, s, ledgertype.Running)
	other := mustSubmit(t, s, "other")
	require.Equal(t, 2, s.Stats().Depth)

	first, err := s.Finish(ctx, id, []byte("first"))
	require.NoError(t, err)
	for _, c := range []call{finish, fail, timeout} {
		snap, err := c(s, id)
		require.ErrorIs(t, err, ledger.ErrTerminal)
		require.Equal(t, first, snap)
	}
	require.Equal(t, 1, s.Stats().Depth, "the other job still counts")
	res, _, err := s.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "first", string(res))
	require.Equal(t, ledgertype.Pending, state(t, s, other))
}

func TestUnknownID(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	const id = "no-such-job"
	_, err := s.Snapshot(ctx, id)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, err = s.State(ctx, id)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	for _, c := range []call{start, finish, fail, timeout} {
		snap, err := c(s, id)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		require.Zero(t, snap)
	}
	_, err = s.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, _, err = s.Result(ctx, id)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, err = s.Wait(ctx, id)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	require.Equal(t, ledger.Stats{}, s.Stats())
}

func TestStateIsTheSnapshotsState(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 8})
	for _, want := range []ledger.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		id := toState(t, s, want)
		require.Equal(t, want, state(t, s, id))
		snap, err := s.Snapshot(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, snap.State)
	}
}

// TestSnapshotFields: the task id, the times read from the injected clock,
// and the error kept as its message.
func TestSnapshotFields(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 2})
	t0 := e.clock.Now()
	id := mustSubmit(t, s, "task-7")
	e.clock.Advance(second)
	_, err := s.Start(ctx, id)
	require.NoError(t, err)
	e.clock.Advance(second)
	snap, err := s.Fail(ctx, id, errBoom)
	require.NoError(t, err)

	require.Equal(t, ledger.Snapshot{
		ID: id, TaskID: "task-7", State: ledgertype.Failed, Err: snap.Err,
		CreatedAt: t0, StartedAt: t0.Add(second), CompletedAt: t0.Add(2 * second),
	}, snap)
	require.EqualError(t, snap.Err, "boom", "the error comes back as its message")
	got, err := s.Snapshot(ctx, id)
	require.NoError(t, err)
	require.Equal(t, snap.CompletedAt, got.CompletedAt)
	require.EqualError(t, got.Err, "boom")
}

func TestResult(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 8})
	for _, st := range []ledger.State{ledgertype.Pending, ledgertype.Running, ledgertype.Failed, ledgertype.TimedOut} {
		id := toState(t, s, st)
		res, snap, err := s.Result(ctx, id)
		require.ErrorIs(t, err, ledger.ErrNotDone, st.String())
		require.Nil(t, res)
		require.Equal(t, st, snap.State, "the snapshot says where the job stands")
	}
	id := toState(t, s, ledgertype.Done)
	for range 2 { // repeatable
		res, snap, err := s.Result(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "result", string(res))
		require.Equal(t, ledgertype.Done, snap.State)
	}
}

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
