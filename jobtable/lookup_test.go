package jobtable_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
)

// awaitBlockedOnJobLock yields until a goroutine inside method of the
// table is blocked on a mutex, which in these tests can only be the job's
// lock the test holds. It gives up after a bounded number of yields.
func awaitBlockedOnJobLock(t *testing.T, method string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 100_000 {
		dump := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(dump, "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(header, "[sync.Mutex.Lock") &&
				strings.Contains(g, "/jobtable.(*Table[...])."+method+"(") {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine blocked on a job's lock in %s", method)
}

// TestCallOnJobEvictedAfterLookup: lookups take no table lock, so a call
// can find a job and a Submit evict it before the call takes the job's
// lock. Only terminal jobs are evicted and a terminal job never changes, so
// the call must answer as it would have at its lookup: TakeRequest must
// not hand out a request (the terminal transition dropped it), Start must
// refuse. The test holds the job's lock so that the call stops right after
// its lookup, evicts the job, then lets the call go on.
func TestCallOnJobEvictedAfterLookup(t *testing.T) {
	for name, tc := range map[string]struct {
		call    func(*table, string) error
		wantErr error
	}{
		"TakeRequest": {func(tab *table, id string) error { _, err := tab.TakeRequest(id); return err }, jobtable.ErrTerminal},
		"Start":       {func(tab *table, id string) error { return errOf(tab.Start(id)) }, jobtable.ErrNotPending},
	} {
		t.Run(name, func(t *testing.T) {
			tab, _ := newTable(t, jobtable.Config{MaxQueue: 2, JobTTL: -1, MaxCompleted: 1})
			id := mustSubmit(t, tab, "a") // its request was never taken
			require.NoError(t, errOf(tab.Timeout(id, errBoom)))

			release := jobtable.HoldJobLock(tab, id)
			got := make(chan error, 1)
			go func() { got <- tc.call(tab, id) }()
			awaitBlockedOnJobLock(t, name)

			other := mustSubmit(t, tab, "b")
			require.NoError(t, errOf(tab.Finish(other, "r")))
			mustSubmit(t, tab, "trigger") // evicts id, the least recently completed
			_, err := tab.Snapshot(id)    // found nothing, so never asks for the lock
			require.ErrorIs(t, err, jobtable.ErrNotFound, "id is evicted")

			release()
			require.ErrorIs(t, <-got, tc.wantErr)
		})
	}
}
