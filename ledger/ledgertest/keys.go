package ledgertest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The rules of idempotency keys (Submit with a Submission.Key).

// submitKeyed is Submit under a key, with the suite's payload, failing the test on
// an error.
func (f *fixture) submitKeyed(key, digest, taskID string) (string, bool) {
	f.t.Helper()
	id, replayed, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: taskID, Key: key, Digest: digest}, payload(taskID))
	require.NoError(f.t, err, "Submit(key %q, digest %q)", key, digest)
	require.NotEmpty(f.t, id)
	return id, replayed
}

// lookupKey is LookupKey, failing the test on an error.
func (f *fixture) lookupKey(key string) (string, string) {
	f.t.Helper()
	id, digest, err := f.l.LookupKey(f.ctx, key)
	require.NoError(f.t, err, "LookupKey(%q)", key)
	return id, digest
}

// testKeyReplay: the same key and digest answer the first job's id,
// replayed, create nothing and take no slot, even with the queue full and
// once the job has ended; the first job keeps its own task id and request.
// LookupKey names the job and its digest, and ErrNotFound for a key no job
// holds.
func testKeyReplay(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 1})
	id, replayed := f.submitKeyed("k", "d1", "first")
	require.False(t, replayed, "a new key creates a job")
	require.Equal(t, 1, f.depth())
	got, digest := f.lookupKey("k")
	require.Equal(t, id, got)
	require.Equal(t, "d1", digest)
	_, _, err := f.l.LookupKey(f.ctx, "nobody's")
	require.ErrorIs(t, err, ledger.ErrNotFound)
	jobs := f.l.Stats().Jobs

	again, replayed := f.submitKeyed("k", "d1", "second")
	require.True(t, replayed)
	require.Equal(t, id, again)
	require.Equal(t, 1, f.depth(), "a replay takes no slot, and the full queue does not refuse it")
	require.Equal(t, jobs, f.l.Stats().Jobs, "a replay creates nothing")
	require.Equal(t, "first", f.snapshot(id).TaskID)
	var req string
	req, err = f.l.TakeRequest(f.ctx, id)
	require.NoError(t, err)
	require.Equal(t, payload("first"), req)

	f.must(f.l.Start(f.ctx, id))
	f.must(f.l.Finish(f.ctx, id, "result"))
	again, replayed = f.submitKeyed("k", "d1", "third")
	require.True(t, replayed, "a key is held while its job is retained, terminal or not")
	require.Equal(t, id, again)
	require.Zero(t, f.depth())

	other, replayed := f.submitKeyed("other", "d1", "other")
	require.False(t, replayed, "another key is another job")
	require.NotEqual(t, id, other)
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{TaskID: "x", Key: "third", Digest: "d1"}, "x")
	require.ErrorIs(t, err, ledger.ErrQueueFull, "a new key is admitted as Submit is")
}

// testKeyConflict: the same key with another digest is ErrKeyConflict,
// distinct from every other answer, and changes nothing.
func testKeyConflict(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	id, _ := f.submitKeyed("k", "d1", "first")
	jobs := f.l.Stats().Jobs
	got, replayed, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "second", Key: "k", Digest: "d2"}, payload("second"))
	require.ErrorIs(t, err, ledger.ErrKeyConflict)
	for _, other := range []error{ledger.ErrQueueFull, ledger.ErrNotFound, ledger.ErrClosed} {
		require.NotErrorIs(t, err, other)
	}
	require.Empty(t, got)
	require.False(t, replayed)
	require.Equal(t, 1, f.depth())
	require.Equal(t, jobs, f.l.Stats().Jobs)
	require.Equal(t, "first", f.snapshot(id).TaskID)
}

// testNoKeyNoCheck: a Submission without a key is a plain submit: its
// digest is ignored, each creates a job, and no job holds the empty key.
func testNoKeyNoCheck(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	var ids []string
	for _, digest := range []string{"d1", "d1", "d2"} {
		id, replayed, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "t", Digest: digest}, payload("t"))
		require.NoError(t, err)
		require.False(t, replayed, "no key, no replay")
		require.NotContains(t, ids, id)
		ids = append(ids, id)
	}
	require.Equal(t, 3, f.depth())
	_, _, err := f.l.LookupKey(f.ctx, "")
	require.ErrorIs(t, err, ledger.ErrNotFound, "no job holds the empty key")
}

// testKeyEvictedWithItsJob: once retention evicts the job that held a key,
// the key is free: the next submit under it, with any digest, creates a
// new job.
func testKeyEvictedWithItsJob(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4, JobTTL: 10 * time.Second, MaxCompleted: -1})
	id, _ := f.submitKeyed("k", "d1", "first")
	f.must(f.l.Fail(f.ctx, id, errBoom))
	f.clock.Advance(10 * time.Second)
	again, replayed := f.submitKeyed("k", "d1", "first") // still retained: lazy eviction
	require.True(t, replayed)
	require.Equal(t, id, again)

	f.submit("evicts") // the TTL pass evicts the first job, and its key
	require.False(t, f.held(id))
	_, _, err := f.l.LookupKey(f.ctx, "k")
	require.ErrorIs(t, err, ledger.ErrNotFound, "the key left with its job")
	fresh, replayed := f.submitKeyed("k", "d2", "second")
	require.False(t, replayed, "the key left with its job")
	require.NotEqual(t, id, fresh)
	again, replayed = f.submitKeyed("k", "d2", "x")
	require.True(t, replayed)
	require.Equal(t, fresh, again, "the new job holds the key")
}

// testKeyLRUEviction: a key also leaves with an LRU eviction.
func testKeyLRUEviction(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4, JobTTL: -1, MaxCompleted: 1})
	id, _ := f.submitKeyed("k", "d1", "first")
	f.must(f.l.Fail(f.ctx, id, errBoom))
	f.toState(ledgertype.Failed) // evicts nothing yet: two terminal jobs, one too many
	f.submit("evicts")           // evicts the least recently completed, the keyed job
	require.False(t, f.held(id))
	_, _, err := f.l.LookupKey(f.ctx, "k")
	require.ErrorIs(t, err, ledger.ErrNotFound, "the key left with its job")
	fresh, replayed := f.submitKeyed("k", "d1", "again")
	require.False(t, replayed)
	require.NotEqual(t, id, fresh)
}

// testKeyRace: concurrent SubmitKeyed calls with one new key create
// exactly one job, and every one of them answers its id.
func testKeyRace(t *testing.T, s Store) {
	const callers = 8
	f := open(t, s, ledger.Config{MaxQueue: callers, JobTTL: -1, MaxCompleted: -1})
	// Many short rounds: the race a check-then-act store loses is between
	// two calls' critical sections, and a loaded machine runs few of them
	// side by side in any one round.
	repeat(100, 10000, time.Second, func(round int) bool {
		key := "k" + strconv.Itoa(round)
		ids := make([]string, callers)
		fresh := make([]bool, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range callers {
			wg.Go(func() {
				<-start
				var replayed bool
				ids[i], replayed, errs[i] = f.l.Submit(f.ctx, ledger.Submission{TaskID: "t", Key: key, Digest: "d"}, "p")
				fresh[i] = !replayed
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for i := range callers {
			require.NoError(t, errs[i])
			require.Equal(t, ids[0], ids[i], "every caller answers the one job")
			if fresh[i] {
				created++
			}
		}
		require.Equal(t, 1, created, "exactly one call creates the job")
		require.Equal(t, 1, f.depth(), "one slot taken")
		f.must(f.l.Fail(f.ctx, ids[0], errBoom))
		return true
	})
	require.NoError(t, f.checkInvariants())
}

// testKeySurvivesRestart: a durable store keeps a retained job's key
// across a restart, whether the job is still pending or ended before the
// restart (a key is held while its job is retained, not while it may
// still run).
func testKeySurvivesRestart(t *testing.T, s Store) {
	if s.Restart == nil {
		t.Skip("the store does not survive a restart")
	}
	f := open(t, s, ledger.Config{MaxQueue: 4})
	id, _ := f.submitKeyed("k", "d1", "first")
	ended, _ := f.submitKeyed("ended", "d1", "ended")
	_, err := f.l.TakeRequest(f.ctx, ended)
	require.NoError(t, err)
	f.must(f.l.Start(f.ctx, ended))
	f.must(f.l.Finish(f.ctx, ended, "result"))
	f.restart()
	got, digest := f.lookupKey("k")
	require.Equal(t, id, got)
	require.Equal(t, "d1", digest)
	jobs := f.l.Stats().Jobs
	again, replayed := f.submitKeyed("k", "d1", "x")
	require.True(t, replayed)
	require.Equal(t, id, again)
	_, _, err = f.l.Submit(f.ctx, ledger.Submission{TaskID: "x", Key: "k", Digest: "d2"}, "x")
	require.ErrorIs(t, err, ledger.ErrKeyConflict)

	again, replayed = f.submitKeyed("ended", "d1", "x")
	require.True(t, replayed, "a job that ended before the restart still holds its key")
	require.Equal(t, ended, again)
	require.Equal(t, jobs, f.l.Stats().Jobs, "a replay creates nothing")
	got, digest = f.lookupKey("ended")
	require.Equal(t, ended, got)
	require.Equal(t, "d1", digest)
	require.Equal(t, ledgertype.Done, f.snapshot(ended).State)
}
