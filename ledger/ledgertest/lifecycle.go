package ledgertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// testTakeRequestOnce: the request is handed out once; the task id stays
// in the job's snapshots and its result.
func testTakeRequestOnce(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id := f.submit("task-7")

	req, err := f.l.TakeRequest(f.ctx, id)
	require.NoError(t, err)
	require.Equal(t, payload("task-7"), req)
	_, err = f.l.TakeRequest(f.ctx, id)
	require.ErrorIs(t, err, ledger.ErrRequestTaken)

	f.must(f.l.Start(f.ctx, id))
	_, err = f.l.TakeRequest(f.ctx, id)
	require.ErrorIs(t, err, ledger.ErrRequestTaken, "still taken once RUNNING")
	f.must(f.l.Finish(f.ctx, id, "ok"))
	_, snap, err := f.l.Result(f.ctx, id)
	require.NoError(t, err)
	require.Equal(t, "task-7", snap.TaskID, "the task id outlives the request")
}

// testTakeRequestAfterEnd: once a job ended its request is gone, taken or
// not, and TakeRequest says the job is terminal.
func testTakeRequestAfterEnd(t *testing.T, s Store) {
	for _, end := range []ledger.State{ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		for _, takenFirst := range []bool{false, true} {
			f := open(t, s, ledger.Config{MaxQueue: 1})
			id := f.submit("a")
			if takenFirst {
				_, err := f.l.TakeRequest(f.ctx, id)
				require.NoError(t, err)
			}
			switch end {
			case ledgertype.Done:
				f.must(f.l.Finish(f.ctx, id, "r"))
			case ledgertype.Failed:
				f.must(f.l.Fail(f.ctx, id, errBoom))
			default:
				f.must(f.l.Timeout(f.ctx, id, errBoom))
			}
			req, err := f.l.TakeRequest(f.ctx, id)
			require.ErrorIs(t, err, ledger.ErrTerminal, "%s, taken first %t", end, takenFirst)
			require.Empty(t, req)
		}
	}
}

// testClosed: after Close every call returns ErrClosed.
func testClosed(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id := f.submit("a")
	require.NoError(t, f.l.Close())
	f.closed = true
	ctx := f.ctx

	_, _, err := f.l.Submit(ctx, ledger.Submission{TaskID: "t"}, "req")
	require.ErrorIs(t, err, ledger.ErrClosed, "Submit")
	_, err = f.l.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed, "TakeRequest")
	for _, o := range ops {
		_, err := o.do(f, id)
		require.ErrorIs(t, err, ledger.ErrClosed, o.name)
	}
	_, err = f.l.State(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed, "State")
	_, err = f.l.Snapshot(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed, "Snapshot")
	_, err = f.l.Wait(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed, "Wait")
	_, _, err = f.l.Result(ctx, id)
	require.ErrorIs(t, err, ledger.ErrClosed, "Result")
	if r, ok := ledger.As[ledger.Recoverer](f.l); ok {
		_, err = r.Recovered(ctx)
		require.ErrorIs(t, err, ledger.ErrClosed, "Recovered")
	}
}

// testRecoveredEmptyWhenFresh: a store opened empty recovered nothing,
// whatever is submitted to it since.
func testRecoveredEmptyWhenFresh(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 2})
	if _, ok := ledger.As[ledger.Recoverer](f.l); !ok {
		t.Skip("the store is no ledger.Recoverer")
	}
	require.Empty(t, f.recovered())
	f.submit("a")
	f.toState(ledgertype.Running)
	require.Empty(t, f.recovered(), "Recovered lists the jobs left by an earlier process only")
}
