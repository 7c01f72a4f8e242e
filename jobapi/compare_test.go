package jobapi_test

import (
	"testing"
	"time"
)

// compareRounds is how many operations of each side run back to back
// before switching to the other side.
const compareRounds = 4

// compare runs subject and baseline alternately, compareRounds at a time,
// until each has run b.N times, and reports the time per operation of each
// and their throughput ratio (baseline time / subject time). Alternating
// in one run keeps both sides under the same machine load, so the ratio
// holds even where absolute figures drift.
func compare(b *testing.B, subject, baseline func() error) {
	b.Helper()
	var subjectTime, baselineTime time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(compareRounds, b.N-done)
		for _, side := range []struct {
			op  func() error
			acc *time.Duration
		}{{subject, &subjectTime}, {baseline, &baselineTime}} {
			start := time.Now()
			for range n {
				if err := side.op(); err != nil {
					b.Fatal(err)
				}
			}
			*side.acc += time.Since(start)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(subjectTime.Nanoseconds())/float64(b.N), "subject-ns/op")
	b.ReportMetric(float64(baselineTime.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(float64(baselineTime)/float64(subjectTime), "ratio")
}
