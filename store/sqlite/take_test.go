package sqlite_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

func TestTakeRequestOnce(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	id := mustSubmit(t, s, "task-7")

	r, err := s.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "payload of task-7", string(r))
	_, err = s.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrRequestTaken)

	// The task id outlives the payload, so the result can echo it.
	require.NoError(t, errOf(s.Start(ctx, id)))
	_, err = s.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrRequestTaken)
	require.NoError(t, errOf(s.Finish(ctx, id, nil)))
	_, snap, err := s.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "task-7", snap.TaskID)
}

// TestTakeRequestAfterStart: Start does not take the request; a runner
// that starts first still gets it, once, as from the memory store.
func TestTakeRequestAfterStart(t *testing.T) {
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	id := toState(t, s, ledgertype.Running)
	r, err := s.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "payload of task", string(r))
	_, err = s.TakeRequest(ctx, id)
	require.ErrorIs(t, err, ledger.ErrRequestTaken)
}

// TestTakeRequestOnTerminalJob: once a job has ended its request is gone,
// taken or not, and TakeRequest says the job is terminal.
func TestTakeRequestOnTerminalJob(t *testing.T) {
	for _, end := range []call{finish, fail, timeout} {
		for _, takenFirst := range []bool{false, true} {
			s, _ := newStore(t, ledger.Config{MaxQueue: 1})
			id := mustSubmit(t, s, "a")
			if takenFirst {
				_, err := s.TakeRequest(ctx, id)
				require.NoError(t, err)
			}
			require.NoError(t, errOf(end(s, id)))
			r, err := s.TakeRequest(ctx, id)
			require.ErrorIs(t, err, ledger.ErrTerminal, "taken first %t", takenFirst)
			require.Nil(t, r)
		}
	}
}

// TestTakeRequestRace: many takers of one job at once, round after round,
// with and without the job's end racing them. At most one gets the
// request; every other answer is the one the state it found allows:
// ErrRequestTaken only once somebody took it, ErrTerminal only once the job
// ended (and then for every later take).
func TestTakeRequestRace(t *testing.T) {
	const rounds, takers = 30, 8
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	for round := range rounds {
		ending := round%2 == 1
		id := mustSubmit(t, s, "race")
		start := make(chan struct{})
		var (
			wg                     sync.WaitGroup
			mu                     sync.Mutex
			won, refused, terminal int
		)
		for range takers {
			wg.Go(func() {
				<-start
				req, err := s.TakeRequest(ctx, id)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
					if string(req) != "payload of race" {
						t.Errorf("took %q", req)
					}
				case err == ledger.ErrRequestTaken:
					refused++
				case err == ledger.ErrTerminal:
					terminal++
				default:
					t.Errorf("TakeRequest: %v", err)
				}
			})
		}
		if ending {
			wg.Go(func() {
				<-start
				if _, err := s.Fail(ctx, id, errBoom); err != nil {
					t.Errorf("Fail: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		require.LessOrEqual(t, won, 1, "round %d", round)
		if refused > 0 {
			require.Equal(t, 1, won, "ErrRequestTaken with nobody holding the request")
		}
		if !ending {
			require.Equal(t, 1, won)
			require.Zero(t, terminal)
			require.NoError(t, errOf(s.Fail(ctx, id, errBoom)))
		}
		_, err := s.TakeRequest(ctx, id)
		require.ErrorIs(t, err, ledger.ErrTerminal)
		checkInvariants(t, s)
	}
}

// TestTakeRequestRacesStart: a take and a Start at once, many times: the
// take always gets the request (Start never releases it from under a take
// in progress), and the request is gone from the file once the job ends.
func TestTakeRequestRacesStart(t *testing.T) {
	const rounds = 30
	s, _ := newStore(t, ledger.Config{MaxQueue: 1})
	for round := range rounds {
		id := mustSubmit(t, s, "race")
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			<-start
			if _, err := s.Start(ctx, id); err != nil {
				t.Errorf("Start: %v", err)
			}
		})
		var req []byte
		var err error
		wg.Go(func() {
			<-start
			req, err = s.TakeRequest(ctx, id)
		})
		close(start)
		wg.Wait()
		require.NoError(t, err, "round %d", round)
		require.Equal(t, "payload of race", string(req))
		require.NoError(t, errOf(s.Finish(ctx, id, nil)))
		checkInvariants(t, s) // TerminalReleasesRequestInv
	}
}

// requestHeld reports whether the file still holds the request of job id.
func requestHeld(t *testing.T, e *env, id string) bool {
	t.Helper()
	var held bool
	require.NoError(t, e.rawDB().QueryRow(`SELECT request IS NOT NULL FROM jobs WHERE id = ?`, id).Scan(&held))
	return held
}

// TestStartReleasesTakenRequest: the file keeps a request while the job is
// PENDING, taken or not (it runs again after a restart), and drops it at
// Start once taken (a job RUNNING at a restart ends FAILED) or at the end.
func TestStartReleasesTakenRequest(t *testing.T) {
	s, e := newStore(t, ledger.Config{MaxQueue: 2})
	taken := mustSubmit(t, s, "taken")
	_, err := s.TakeRequest(ctx, taken)
	require.NoError(t, err)
	require.True(t, requestHeld(t, e, taken), "PENDING: kept for a restart")
	require.NoError(t, errOf(s.Start(ctx, taken)))
	require.False(t, requestHeld(t, e, taken), "started after the take: released")

	untaken := toState(t, s, ledgertype.Running)
	require.True(t, requestHeld(t, e, untaken), "started, not taken: still to be taken")
	require.NoError(t, errOf(s.Finish(ctx, untaken, nil)))
	require.False(t, requestHeld(t, e, untaken), "ended: released")
}
