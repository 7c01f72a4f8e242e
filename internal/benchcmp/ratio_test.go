package benchcmp_test

import (
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
)

// Work of the sides in these tests, in iterations of spin: the heavy side
// does 20 times the light side's, and ratioOps (b.N) operations of it take
// tens of milliseconds, so that the light side would have to lose about
// that much more than the heavy one to the machine's load (a thread
// waiting for a core) before a ratio crossed 1. The tests therefore
// check which side of 1 a ratio is on, never how far from it.
const (
	lightWork = 10_000
	heavyWork = 20 * lightWork
	ratioOps  = 128
)

// spinSink keeps spin's result alive, so that its loop is not optimised away.
var spinSink atomic.Uint64

// spin is an operation that does n iterations of arithmetic and nothing
// else: CPU work, with no sleep, lock or allocation.
func spin(n int) func() error {
	return func() error {
		x := uint64(n)
		for i := range n {
			x = x*6364136223846793005 + uint64(i)
		}
		spinSink.Store(x)
		return nil
	}
}

// benchmark runs f as a benchmark of exactly ratioOps iterations and
// returns what it reported.
func benchmark(t *testing.T, f func(b *testing.B)) testing.BenchmarkResult {
	t.Helper()
	setBenchtime(t, ratioOps)
	r := testing.Benchmark(f)
	t.Logf("%v", r.Extra)
	require.Equal(t, ratioOps, r.N, "the last run was not of %d iterations", ratioOps)
	return r
}

// requireMetrics checks that r reported exactly the metrics named.
func requireMetrics(t *testing.T, r testing.BenchmarkResult, names ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(r.Extra))
	slices.Sort(names)
	require.Equal(t, names, got)
}

// TestRatioIsBaselineOverSubject pins the ratio's direction and the names
// of the metrics: "ratio" is baseline time / subject time, above 1 when the
// subject is faster. Each comparison runs twice, once with the light side
// as the subject and once with the heavy one, so that a ratio computed the
// other way round, or a metric given the other side's time, fails one of
// the two.
func TestRatioIsBaselineOverSubject(t *testing.T) {
	for _, tt := range []struct {
		name    string
		compare func(b *testing.B, subject, baseline func() error) benchcmp.Result
	}{
		{"Alternate", func(b *testing.B, subject, baseline func() error) benchcmp.Result {
			return benchcmp.Alternate(b, 4, subject, baseline)
		}},
		{"AlternateParallel", func(b *testing.B, subject, baseline func() error) benchcmp.Result {
			return benchcmp.AlternateParallel(b, 2, 2, subject, baseline)
		}},
	} {
		for _, light := range []bool{true, false} {
			subject, baseline := spin(heavyWork), spin(lightWork)
			if light {
				subject, baseline = baseline, subject
			}
			t.Run(tt.name+map[bool]string{true: "/light-subject", false: "/heavy-subject"}[light], func(t *testing.T) {
				var res benchcmp.Result
				r := benchmark(t, func(b *testing.B) { res = tt.compare(b, subject, baseline) })
				requireMetrics(t, r, "ns/op", "subject-ns/op", "baseline-ns/op", "ratio")
				require.Zero(t, r.Extra["ns/op"])
				require.InDelta(t, r.Extra["baseline-ns/op"]/r.Extra["subject-ns/op"], r.Extra["ratio"], 1e-9)
				require.InDelta(t, float64(res.Baseline)/float64(res.Subject), r.Extra["ratio"], 1e-9)
				if light {
					require.Greater(t, r.Extra["ratio"], 1.0, "the subject did a twentieth of the baseline's work")
				} else {
					require.Less(t, r.Extra["ratio"], 1.0, "the subject did 20 times the baseline's work")
				}
			})
		}
	}
}

// TestSideRatiosAreBaselineOverSide pins the same for any number of sides:
// NAME-ratio (and NAME-cpu-ratio) is the first side's time over NAME's,
// reported for every side but the first, above 1 for a side faster than
// the first. The sides are a light baseline, a heavy side and a light
// one, so that a ratio taken the other way round, or against the wrong
// side, fails.
func TestSideRatiosAreBaselineOverSide(t *testing.T) {
	sides := []benchcmp.Side{
		{Name: "base", Op: spin(lightWork)},
		{Name: "heavy", Op: spin(heavyWork)},
		{Name: "light", Op: spin(lightWork)},
	}
	t.Run("AlternateSides", func(t *testing.T) {
		var took []time.Duration
		r := benchmark(t, func(b *testing.B) { _, took = benchcmp.AlternateSides(b, 1, 4, sides...) })
		requireMetrics(t, r, "ns/op", "base-ns/op", "heavy-ns/op", "light-ns/op", "heavy-ratio", "light-ratio")
		require.Less(t, r.Extra["heavy-ratio"], 1.0, "heavy did 20 times base's work")
		require.Greater(t, r.Extra["heavy-ns/op"], r.Extra["base-ns/op"])
		require.InDelta(t, r.Extra["base-ns/op"]/r.Extra["heavy-ns/op"], r.Extra["heavy-ratio"], 1e-9)
		require.InDelta(t, float64(took[0])/float64(took[1]), r.Extra["heavy-ratio"], 1e-9)
		require.InDelta(t, float64(took[0])/float64(took[2]), r.Extra["light-ratio"], 1e-9)
		require.Greater(t, r.Extra["light-ratio"], r.Extra["heavy-ratio"], "light did a twentieth of heavy's work")
	})
	t.Run("AlternateSidesCPU", func(t *testing.T) {
		r := benchmark(t, func(b *testing.B) { benchcmp.AlternateSidesCPU(b, 1, 4, sides...) })
		requireMetrics(t, r, "ns/op",
			"base-ns/op", "heavy-ns/op", "light-ns/op", "heavy-ratio", "light-ratio",
			"base-cpu-ns/op", "heavy-cpu-ns/op", "light-cpu-ns/op", "heavy-cpu-ratio", "light-cpu-ratio")
		require.Less(t, r.Extra["heavy-ratio"], 1.0, "heavy did 20 times base's work")
		require.Less(t, r.Extra["heavy-cpu-ratio"], 1.0, "heavy did 20 times base's work")
		require.Greater(t, r.Extra["heavy-cpu-ns/op"], r.Extra["base-cpu-ns/op"])
		require.InDelta(t, r.Extra["base-cpu-ns/op"]/r.Extra["heavy-cpu-ns/op"], r.Extra["heavy-cpu-ratio"], 1e-9)
		require.InDelta(t, r.Extra["base-cpu-ns/op"]/r.Extra["light-cpu-ns/op"], r.Extra["light-cpu-ratio"], 1e-9)
		require.Greater(t, r.Extra["light-cpu-ratio"], r.Extra["heavy-cpu-ratio"], "light did a twentieth of heavy's work")
	})
}
