package jobtable

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// contents is the list, least recently completed first.
func contents[T any](l *retentionList[T]) []T { return slices.Collect(l.all()) }

func TestRetentionListOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		push, pop  int
		wantFront  int // -1 for empty
		wantLen    int
		wantLength int // ring size after the operations
	}{
		{name: "empty", wantFront: -1},
		{name: "one", push: 1, wantFront: 0, wantLen: 1, wantLength: minRetentionCap},
		{name: "fills the first ring", push: minRetentionCap, wantFront: 0, wantLen: minRetentionCap, wantLength: minRetentionCap},
		{name: "grows", push: minRetentionCap + 1, wantFront: 0, wantLen: minRetentionCap + 1, wantLength: 2 * minRetentionCap},
		{name: "drains", push: 5, pop: 5, wantFront: -1, wantLength: minRetentionCap},
		{name: "pops in push order", push: 40, pop: 17, wantFront: 17, wantLen: 23, wantLength: 64},
		{name: "shrinks at a quarter", push: 100, pop: 100 - 32, wantFront: 68, wantLen: 32, wantLength: 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l retentionList[int]
			for i := range tc.push {
				l.push(i)
			}
			for i := range tc.pop {
				require.Equal(t, i, l.popFront(), "pop %d", i)
			}
			require.NoError(t, l.check())
			require.Equal(t, tc.wantLen, l.len())
			require.Len(t, l.buf, tc.wantLength)
			f, ok := l.front()
			if tc.wantFront < 0 {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.wantFront, f)
			want := make([]int, 0, tc.wantLen)
			for i := tc.pop; i < tc.push; i++ {
				want = append(want, i)
			}
			require.Equal(t, want, contents(&l))
		})
	}
}

// TestRetentionListAgainstSlice drives the ring and a plain slice with the
// same random pushes and pops, wrapping the ring around many times, and
// compares them after every step.
func TestRetentionListAgainstSlice(t *testing.T) {
	const steps = 20_000
	rng := rand.New(rand.NewPCG(1, 2))
	var (
		l    retentionList[*int]
		ref  []*int
		next int
	)
	for step := range steps {
		// Phases that favour pushes, then pops, so the ring grows and
		// shrinks as well as wrapping.
		pushBias := 3
		if (step/2000)%2 == 1 {
			pushBias = 1
		}
		if len(ref) == 0 || rng.IntN(4) < pushBias {
			v := next
			next++
			l.push(&v)
			ref = append(ref, &v)
		} else {
			require.Same(t, ref[0], l.popFront(), "step %d", step)
			ref = ref[1:]
		}
		require.Equal(t, len(ref), l.len())
		if step%97 == 0 {
			require.NoError(t, l.check(), "step %d", step)
			require.True(t, slices.Equal(ref, contents(&l)), "step %d", step)
		}
	}
}

// TestRetentionListReleasesPopped: a popped element's slot is cleared, so
// the ring keeps no evicted job alive (check fails on a slot that is not).
func TestRetentionListReleasesPopped(t *testing.T) {
	var l retentionList[*int]
	for i := range 10 {
		l.push(&i)
	}
	for range 10 {
		l.popFront()
	}
	require.NoError(t, l.check())
	for _, p := range l.buf {
		require.Nil(t, p)
	}
}

// TestRetentionListAmortised counts the element copies that resizing makes
// over a long run of pushes and pops: at most a constant per operation,
// whatever the size the list reaches.
func TestRetentionListAmortised(t *testing.T) {
	var l retentionList[int]
	ops, copies := 0, 0
	resizes := func() int { return len(l.buf) }
	for round := range 4 {
		n := 1000 << round
		for i := range n {
			before := resizes()
			l.push(i)
			ops++
			if resizes() != before {
				copies += l.len() - 1
			}
		}
		for range n {
			before := resizes()
			l.popFront()
			ops++
			if resizes() != before {
				copies += l.len()
			}
		}
	}
	require.Zero(t, l.len())
	require.LessOrEqual(t, copies, 2*ops, "%d copies for %d operations", copies, ops)
}

func TestRetentionListPopEmptyPanics(t *testing.T) {
	var l retentionList[int]
	require.Panics(t, func() { l.popFront() })
	l.push(1)
	l.popFront()
	require.Panics(t, func() { l.popFront() })
}

func TestRetentionListCheckCatches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(*retentionList[*int])
	}{
		{"too many", func(l *retentionList[*int]) { l.n = len(l.buf) + 1 }},
		{"not a power of two", func(l *retentionList[*int]) { l.buf = l.buf[:len(l.buf)-1] }},
		{"front outside", func(l *retentionList[*int]) { l.head = len(l.buf) }},
		{"stale slot", func(l *retentionList[*int]) { l.buf[(l.head+l.n)&(len(l.buf)-1)] = new(int) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l retentionList[*int]
			for i := range 3 {
				l.push(&i)
			}
			require.NoError(t, l.check())
			tc.corrupt(&l)
			require.Error(t, l.check())
		})
	}
}
