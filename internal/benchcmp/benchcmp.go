// Package benchcmp measures a subject against a baseline in one benchmark
// run. The two alternate in small chunks, so both run under the same
// machine load and their ratio holds even where absolute figures drift,
// and their order is reversed every other round, so that neither always
// pays for what the other leaves behind (order.go).
//
// Under -benchmem (or b.ReportAllocs), a comparison's B/op and allocs/op
// are those of every side together: the testing package divides what was
// allocated between the timer's reset and its stop by b.N, and each side
// runs b.N operations, so with two sides they are the sum of both sides'
// allocations per operation, plus the harness's goroutine per chunk (a few
// bytes an operation at a chunk of 64). A side's own allocations need a
// benchmark of that side alone.
package benchcmp

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Result is what one comparison measured: the operations each side ran,
// and the wall time each took, for a caller that derives further figures
// (a rate, a cost per operation) from the same run.
type Result struct {
	Ops               int
	Subject, Baseline time.Duration
}

// Alternate runs subject and baseline alternately, chunk operations of one
// and then of the other, in rounds (subject first in even rounds, baseline
// first in odd ones), until each has run b.N times. It reports the time
// per operation of each and their ratio, baseline time / subject time: above
// 1 the subject is faster.
func Alternate(b *testing.B, chunk int, subject, baseline func() error) Result {
	b.Helper()
	return AlternateParallel(b, 1, chunk, subject, baseline)
}

// AlternateParallel is Alternate with each chunk run by procs goroutines at
// once, each running chunk operations; procs <= 0 means GOMAXPROCS. The
// figures are wall time per operation, as b.RunParallel reports them.
func AlternateParallel(b *testing.B, procs, chunk int, subject, baseline func() error) Result {
	b.Helper()
	ops, took, _ := alternate(b, procs, chunk, false, subject, baseline)
	subjectTime, baselineTime := took[0], took[1]
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(subjectTime.Nanoseconds())/float64(ops), "subject-ns/op")
	b.ReportMetric(float64(baselineTime.Nanoseconds())/float64(ops), "baseline-ns/op")
	b.ReportMetric(float64(baselineTime)/float64(subjectTime), "ratio")
	return Result{Ops: ops, Subject: subjectTime, Baseline: baselineTime}
}

// alternate runs each of ops in turn, chunk operations on each of procs
// goroutines, round after round, in the order of ops in even rounds and
// the reverse in odd ones (sideAt), until each has run b.N times, and returns
// how many each ran and each one's wall time, in the order of ops, and,
// when withCPU is set, the CPU time the whole process used while each ran
// (else nil). It resets the timer before the first round and stops it
// after the last; procs <= 0 means GOMAXPROCS.
func alternate(b *testing.B, procs, chunk int, withCPU bool, ops ...func() error) (int, []time.Duration, []time.Duration) {
	b.Helper()
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	took := make([]time.Duration, len(ops))
	var used []time.Duration
	if withCPU {
		used = make([]time.Duration, len(ops))
	}
	var done int
	b.ResetTimer()
	for round := 0; done < b.N; round++ {
		n := max(1, min(chunk, (b.N-done+procs-1)/procs))
		for k := range ops {
			i := sideAt(round, k, len(ops))
			op := ops[i]
			var before time.Duration
			if withCPU {
				before = processCPU(b)
			}
			d, err := run(procs, n, op)
			if err != nil {
				b.Fatal(err)
			}
			took[i] += d
			if withCPU {
				used[i] += processCPU(b) - before
			}
		}
		done += procs * n
	}
	b.StopTimer()
	return done, took, used
}

// run runs op n times on each of procs goroutines and returns the wall time
// and the first error.
func run(procs, n int, op func() error) (time.Duration, error) {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	start := time.Now()
	for range procs {
		wg.Go(func() {
			for range n {
				if err := op(); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), first
}
