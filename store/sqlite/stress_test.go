package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestHammer runs whole lifecycles from 4*GOMAXPROCS goroutines at once,
// through ledger.WithCodecs as a server would use the store, with a waiter
// and a canceller racing each runner, and checks every answer against the
// contract, then the invariants, then the same again after a restart.
func TestHammer(t *testing.T) {
	const jobsPerWorker = 12
	workers := 4 * runtime.GOMAXPROCS(0)
	e := newEnv(t, ledger.Config{MaxQueue: workers, JobTTL: -1, MaxCompleted: 2 * workers})
	raw := e.open()
	l := ledger.WithCodecs[string, string](raw, ledger.String{}, ledger.String{})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range jobsPerWorker {
				if err := lifecycle(l, fmt.Sprintf("w%d-%d", w, j), j%3 == 0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Pollers read what the runners write, all the time.
	stop := make(chan struct{})
	var polls sync.WaitGroup
	for range 2 {
		polls.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st := raw.Stats()
				if st.Depth < 0 || st.Depth > workers {
					t.Errorf("depth %d", st.Depth)
				}
				if _, err := l.State(ctx, "j"+strconv.Itoa(i%(workers*jobsPerWorker)+1)); err != nil && !errors.Is(err, ledger.ErrNotFound) {
					t.Errorf("State: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	polls.Wait()
	checkInvariants(t, raw)
	st := raw.Stats()
	require.Zero(t, st.Depth)
	require.LessOrEqual(t, st.Retained, 2*workers+workers, "MaxCompleted, and what ended since the last Submit")
	ws := raw.WriteStats()
	t.Logf("%d writes in %d commits", ws.Writes, ws.Commits)

	raw = e.reopen(raw)
	require.Equal(t, min(st.Retained, 2*workers), raw.Stats().Retained, "Open's retention pass")
}

// lifecycle runs one job: submit (retrying while the queue is full), a
// waiter, the runner's take, start and finish, and, if cancel, a Fail
// racing the runner as a client's cancel would. Every answer must be one
// the contract allows at that point.
func lifecycle(l ledger.Ledger[string, string], task string, cancel bool) error {
	var id string
	for {
		var err error
		id, _, err = l.Submit(ctx, ledger.Submission{TaskID: task}, "req of "+task)
		if err == nil {
			break
		}
		if !errors.Is(err, ledger.ErrQueueFull) {
			return fmt.Errorf("Submit: %w", err)
		}
		runtime.Gosched()
	}
	waited := make(chan error, 1)
	go func() {
		snap, err := l.Wait(context.Background(), id)
		if err == nil && !snap.State.Terminal() {
			err = fmt.Errorf("Wait returned %s", snap.State)
		}
		waited <- err
	}()
	cancelled := make(chan error, 1)
	if cancel {
		go func() {
			_, err := l.Fail(ctx, id, errBoom)
			if errors.Is(err, ledger.ErrTerminal) {
				err = nil
			}
			cancelled <- err
		}()
	} else {
		cancelled <- nil
	}

	req, err := l.TakeRequest(ctx, id)
	switch {
	case errors.Is(err, ledger.ErrTerminal) && cancel:
	case err != nil:
		return fmt.Errorf("TakeRequest %s: %w", id, err)
	case req != "req of "+task:
		return fmt.Errorf("TakeRequest %s: %q", id, req)
	default:
		_, err := l.Start(ctx, id)
		if err != nil && !(cancel && (errors.Is(err, ledger.ErrNotPending))) {
			return fmt.Errorf("Start %s: %w", id, err)
		}
		_, err = l.Finish(ctx, id, "res of "+task)
		if err != nil && !(cancel && errors.Is(err, ledger.ErrTerminal)) {
			return fmt.Errorf("Finish %s: %w", id, err)
		}
	}
	if err := <-cancelled; err != nil {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	if err := <-waited; err != nil {
		return fmt.Errorf("Wait %s: %w", id, err)
	}
	res, snap, err := l.Result(ctx, id)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return nil // evicted already: MaxCompleted is small on purpose
	case err == nil && res != "res of "+task:
		return fmt.Errorf("Result %s: %q", id, res)
	case err == nil, errors.Is(err, ledger.ErrNotDone) && cancel && snap.State == ledgertype.Failed:
		return nil
	}
	return fmt.Errorf("Result %s: %s, %w", id, snap.State, err)
}

var _ ledger.Ledger[[]byte, []byte] = (*sqlite.Store)(nil)
