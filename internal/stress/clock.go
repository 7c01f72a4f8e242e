package stress

import (
	"sync/atomic"
	"time"
)

// Clock hands out timestamps for a history: nanoseconds since one monotonic
// base, strictly increasing across every goroutine that shares the Clock.
//
// Each stamp is published with an atomic compare-and-swap. Go's atomics are
// sequentially consistent, so the stamp taken before an operation cannot be
// reordered after it, nor the stamp taken after it before it: porcupine's
// README warns that a plain time.Since can move around the operation on
// weakly ordered CPUs and produce spurious violations (porcupine issue 40).
// Strictly increasing stamps also mean two events never tie.
type Clock struct {
	base time.Time
	last atomic.Int64
}

// NewClock returns a Clock whose base is now.
func NewClock() *Clock { return &Clock{base: time.Now()} }

// Now returns the next timestamp: the monotonic time since the base, or one
// more than the last stamp handed out if that is later.
func (c *Clock) Now() int64 {
	t := int64(time.Since(c.base))
	for {
		last := c.last.Load()
		next := max(t, last+1)
		if c.last.CompareAndSwap(last, next) {
			return next
		}
	}
}

// At converts t, a time read from the monotonic clock (a context deadline,
// say), to the Clock's scale. It hands out no stamp.
func (c *Clock) At(t time.Time) int64 { return int64(t.Sub(c.base)) }

// Time converts t, a timestamp of the Clock, back to the monotonic clock:
// the inverse of At.
func (c *Clock) Time(t int64) time.Time { return c.base.Add(time.Duration(t)) }
