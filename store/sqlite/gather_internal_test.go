package sqlite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGatherWait(t *testing.T) {
	require.Zero(t, gatherWait(0), "no commit yet: no wait")
	require.Equal(t, 150*time.Microsecond, gatherWait(300*time.Microsecond), "half a commit")
	require.Equal(t, maxGatherWait, gatherWait(time.Second), "bounded")
}

// TestGatherTakesWhatIsQueued: the writes queued join the batch at once, up
// to its limit, whatever the batch expects.
func TestGatherTakesWhatIsQueued(t *testing.T) {
	q := newQueue()
	a, b, c := &op{id: "a"}, &op{id: "b"}, &op{id: "c"}
	for _, o := range []*op{a, b, c} {
		q.push(o)
	}
	quit := make(chan struct{})
	g := gatherer{expect: 0, lastCommit: time.Hour}
	g.begin()
	require.Equal(t, []*op{a, b}, g.more(q, 1, 3, quit), "up to the limit")
	require.Empty(t, g.more(q, 3, 3, quit), "the batch is full")
	require.False(t, g.waiting)
	require.Equal(t, []*op{c}, g.more(q, 1, 3, quit), "queued: taken without a wait")
	require.Empty(t, g.more(q, 2, 3, quit), "none queued, none expected: no wait")
}

// TestGatherWaitsForWhatIsExpected: a batch short of what it expects takes
// a write queued during the wait, and gives up at the wait's end or at
// Close.
func TestGatherWaitsForWhatIsExpected(t *testing.T) {
	q := newQueue()
	quit := make(chan struct{})
	// A wait of an hour, which only the push can end.
	g := gatherer{expect: 2, lastCommit: 2 * time.Hour, maxWait: time.Hour}
	g.begin()
	late := &op{id: "late"}
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		q.push(late)
	}()
	require.Equal(t, []*op{late}, g.more(q, 1, 256, quit))
	<-pushed
	require.Empty(t, g.more(q, 2, 256, quit), "what was expected came")

	g.expect, g.maxWait = 8, 0 // a wait of maxGatherWait
	g.begin()
	require.Empty(t, g.more(q, 1, 256, quit), "after maxGatherWait")
	g.begin() // the timer is reused
	close(quit)
	require.Empty(t, g.more(q, 1, 256, quit), "Close ends the wait")
	require.False(t, g.waiting)
}
