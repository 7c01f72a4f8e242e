package benchcmp

import (
	"fmt"
	"testing"
	"time"
)

// Side is one of several configurations compared in one run.
type Side struct {
	Name string       // names its metrics: NAME-ns/op, NAME-ratio
	Op   func() error // one operation on it
}

// AlternateSides is AlternateParallel with any number of sides: the first
// is the baseline, and every side runs chunk operations on each of procs
// goroutines in turn, round after round, in the order of sides in even
// rounds and the reverse in odd ones, until each has run b.N times. Each
// side thus follows the sides beside it in the list, and pays for what
// they leave behind (order.go): put next to each other the sides whose
// figures are compared. It
// reports each side's wall time per operation (NAME-ns/op) and, for each
// side after the first, the baseline's time over its own (NAME-ratio:
// above 1 that side is faster), and returns the operations each side ran
// and each side's wall time, in the order of sides.
func AlternateSides(b *testing.B, procs, chunk int, sides ...Side) (int, []time.Duration) {
	b.Helper()
	n, took, _ := alternateSides(b, procs, chunk, false, sides)
	return n, took
}

// AlternateSidesCPU is AlternateSides that also reports, for each side,
// the CPU time the whole process used while that side ran, per operation
// (NAME-cpu-ns/op), and, for each side after the first, the baseline's CPU
// time over its own (NAME-cpu-ratio). Where the process holds both ends of
// an exchange (a client and the server it calls), this counts the work of
// both and of the runtime (the garbage collector, threads spinning for
// work), and none of the time a thread waits for a core; work that one
// side leaves running when its chunk ends is counted to the next, which is
// why the order reverses every other round. Each chunk's figure
// also holds part of the two getrusage calls around it, the same on every
// side: it pulls the CPU ratios a little towards 1, and cancels out of a
// difference between two sides. It returns what AlternateSides does, and
// each side's CPU time.
func AlternateSidesCPU(b *testing.B, procs, chunk int, sides ...Side) (int, []time.Duration, []time.Duration) {
	b.Helper()
	n, took, used := alternateSides(b, procs, chunk, true, sides)
	for i, side := range sides {
		b.ReportMetric(float64(used[i].Nanoseconds())/float64(n), side.Name+"-cpu-ns/op")
		if i > 0 {
			b.ReportMetric(float64(used[0])/float64(used[i]), side.Name+"-cpu-ratio")
		}
	}
	return n, took, used
}

// alternateSides runs and reports what AlternateSides does, measuring CPU
// time too when withCPU is set.
func alternateSides(b *testing.B, procs, chunk int, withCPU bool, sides []Side) (int, []time.Duration, []time.Duration) {
	b.Helper()
	if len(sides) == 0 {
		b.Fatal("benchcmp: no sides")
	}
	ops := make([]func() error, len(sides))
	for i, side := range sides {
		ops[i] = func() error {
			if err := side.Op(); err != nil {
				return fmt.Errorf("%s: %w", side.Name, err)
			}
			return nil
		}
	}
	n, took, used := alternate(b, procs, chunk, withCPU, ops...)
	b.ReportMetric(0, "ns/op")
	for i, side := range sides {
		b.ReportMetric(float64(took[i].Nanoseconds())/float64(n), side.Name+"-ns/op")
		if i > 0 {
			b.ReportMetric(float64(took[0])/float64(took[i]), side.Name+"-ratio")
		}
	}
	return n, took, used
}
