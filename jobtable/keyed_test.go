package jobtable_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
)

// TestKeyLeavesWithItsJob: a key is held exactly while its job is
// retained. A replay returns the holder and takes no slot; another digest
// conflicts; once retention evicts the holder (by its TTL or by the
// bound), the key is free, a submit under it creates a new job, and the
// table's invariants (KeyInv: the key index and the keyed jobs agree)
// hold after each step.
func TestKeyLeavesWithItsJob(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg   jobtable.Config
		evict func(*table, *testing.T) // after the clock passed the TTL
	}{
		"ttl": {jobtable.Config{MaxQueue: 1, JobTTL: time.Second}, func(tab *table, t *testing.T) {
			other := mustSubmit(t, tab, "trigger") // eviction runs on submit
			require.NoError(t, errOf(tab.Finish(other, "r")))
		}},
		"bound": {jobtable.Config{MaxQueue: 1, JobTTL: -1, MaxCompleted: 1}, func(tab *table, t *testing.T) {
			for range 2 { // a second ended job pushes the first out
				id := mustSubmit(t, tab, "other")
				require.NoError(t, errOf(tab.Finish(id, "r")))
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			tab, clock := newTable(t, tc.cfg)
			id, replayed, err := tab.SubmitKeyed(jobtable.Submission{TaskID: "task", Key: "k", Digest: "d1"}, req{payload: "p"})
			require.NoError(t, err)
			require.False(t, replayed)

			again, replayed, err := tab.SubmitKeyed(jobtable.Submission{TaskID: "task", Key: "k", Digest: "d1"}, req{payload: "p"})
			require.NoError(t, err, "a replay takes no slot, though the queue is full")
			require.True(t, replayed)
			require.Equal(t, id, again)
			_, _, err = tab.SubmitKeyed(jobtable.Submission{TaskID: "task", Key: "k", Digest: "d2"}, req{payload: "q"})
			require.ErrorIs(t, err, jobtable.ErrKeyConflict)
			checkInvariants(t, tab)

			require.NoError(t, errOf(tab.Finish(id, "r")))
			held, digest, err := tab.LookupKey("k")
			require.NoError(t, err, "an ended job still retained keeps its key")
			require.Equal(t, id, held)
			require.Equal(t, "d1", digest)

			clock.Advance(2 * time.Second) // past the TTL, where there is one
			tc.evict(tab, t)
			_, err = tab.Snapshot(id)
			require.ErrorIs(t, err, jobtable.ErrNotFound, "the key's job is evicted")
			_, _, err = tab.LookupKey("k")
			require.ErrorIs(t, err, jobtable.ErrNotFound, "the key left with its job")
			checkInvariants(t, tab)

			fresh, replayed, err := tab.SubmitKeyed(jobtable.Submission{TaskID: "task", Key: "k", Digest: "d2"}, req{payload: "q"})
			require.NoError(t, err, "a freed key takes another request")
			require.False(t, replayed)
			require.NotEqual(t, id, fresh)
		})
	}
}
