package benchcmp_test

import (
	"flag"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
)

// ops is the number of operations each side runs in these tests (b.N).
const ops = 64

// sideLog records, in order, the side of every operation a comparison
// runs, and what the comparison said it ran.
type sideLog struct {
	mu    sync.Mutex // guards sides
	sides []string

	n, ran int // b.N, and the operations of each side the comparison returned
}

// op is one operation of the side name: it only records itself.
func (l *sideLog) op(name string) func() error {
	return func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.sides = append(l.sides, name)
		return nil
	}
}

// runLogged runs compare, which returns the operations of each side it
// ran, as a benchmark of exactly ops iterations, and returns the sides it
// ran, in order, each once per chunk of procs*chunk operations, which must
// all be of that side.
func runLogged(t *testing.T, procs, chunk int, compare func(b *testing.B, l *sideLog) int) []string {
	t.Helper()
	setBenchtime(t, ops)
	var l *sideLog
	testing.Benchmark(func(b *testing.B) {
		l = &sideLog{n: b.N}
		l.ran = compare(b, l)
	})
	require.Equal(t, ops, l.n, "the last run was not of %d iterations", ops)
	require.Equal(t, ops, l.ran)
	require.Len(t, l.sides, len(l.sides)/(procs*chunk)*(procs*chunk))
	var chunks []string
	for start := 0; start < len(l.sides); start += procs * chunk {
		each := l.sides[start : start+procs*chunk]
		for _, side := range each {
			require.Equal(t, each[0], side, "a chunk ran more than one side")
		}
		chunks = append(chunks, each[0])
	}
	return chunks
}

// setBenchtime makes testing.Benchmark run a benchmark with b.N = n (after
// its first run of 1), until t ends.
func setBenchtime(t *testing.T, n int) {
	t.Helper()
	f := flag.Lookup("test.benchtime")
	require.NotNil(t, f)
	was := f.Value.String()
	require.NoError(t, f.Value.Set(strconv.Itoa(n)+"x"))
	t.Cleanup(func() { _ = f.Value.Set(was) })
}

// rounds is the order of len(sides)*n chunks when the sides run in
// rounds, each round in the reverse order of the one before.
func rounds(n int, sides ...string) []string {
	var want []string
	for round := range n {
		order := slices.Clone(sides)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		want = append(want, order...)
	}
	return want
}

// TestSideOrderReversesEveryOtherRound pins the order sides run in: the
// caller's in even rounds, the reverse in odd ones. In a fixed order, what
// one side leaves behind when its chunk ends (garbage, a goroutine still
// finishing) was always paid by the same next side.
func TestSideOrderReversesEveryOtherRound(t *testing.T) {
	tests := []struct {
		name         string
		procs, chunk int
		sides        []string
		compare      func(b *testing.B, l *sideLog) int
	}{
		{"Alternate", 1, 4, []string{"subject", "baseline"}, func(b *testing.B, l *sideLog) int {
			return benchcmp.Alternate(b, 4, l.op("subject"), l.op("baseline")).Ops
		}},
		{"AlternateParallel", 2, 1, []string{"subject", "baseline"}, func(b *testing.B, l *sideLog) int {
			return benchcmp.AlternateParallel(b, 2, 1, l.op("subject"), l.op("baseline")).Ops
		}},
		{"AlternateSides", 1, 2, []string{"a", "b", "c"}, func(b *testing.B, l *sideLog) int {
			n, _ := benchcmp.AlternateSides(b, 1, 2,
				benchcmp.Side{Name: "a", Op: l.op("a")},
				benchcmp.Side{Name: "b", Op: l.op("b")},
				benchcmp.Side{Name: "c", Op: l.op("c")})
			return n
		}},
		{"AlternateSidesCPU", 1, 1, []string{"a", "b", "c", "d"}, func(b *testing.B, l *sideLog) int {
			n, _, _ := benchcmp.AlternateSidesCPU(b, 1, 1,
				benchcmp.Side{Name: "a", Op: l.op("a")},
				benchcmp.Side{Name: "b", Op: l.op("b")},
				benchcmp.Side{Name: "c", Op: l.op("c")},
				benchcmp.Side{Name: "d", Op: l.op("d")})
			return n
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runLogged(t, tt.procs, tt.chunk, tt.compare)
			require.Equal(t, rounds(ops/(tt.procs*tt.chunk), tt.sides...), got)
		})
	}
}

// TestTwoSidesPayAlike checks what the reversal is for: of two sides, each
// follows itself as often as it follows the other, so both pay the same
// mix of what the two leave behind.
func TestTwoSidesPayAlike(t *testing.T) {
	got := runLogged(t, 1, 1, func(b *testing.B, l *sideLog) int {
		return benchcmp.Alternate(b, 1, l.op("subject"), l.op("baseline")).Ops
	})
	follows := map[[2]string]int{}
	for i := 1; i < len(got); i++ {
		follows[[2]string{got[i-1], got[i]}]++
	}
	// 64 rounds: 127 successions, the missing one a side following itself.
	require.Equal(t, map[[2]string]int{
		{"subject", "baseline"}: 32, {"baseline", "subject"}: 32,
		{"baseline", "baseline"}: 32, {"subject", "subject"}: 31,
	}, follows)
}
