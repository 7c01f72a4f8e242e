package benchcmp

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time, user and system, that every thread of the
// process has used so far. Linux sums each thread's scheduler runtime for
// it, so the total does not depend on the tick; it comes in whole
// microseconds, and the truncation at the two ends of a chunk is as likely
// to shorten it as to lengthen it, so it averages out over many chunks.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
