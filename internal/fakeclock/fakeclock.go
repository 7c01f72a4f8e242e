// Package fakeclock is a manually advanced clock for tests: inject Now into
// a jobtable.Config and move time with Advance instead of sleeping.
package fakeclock

import (
	"strconv"
	"sync"
	"time"
)

// Clock is a fake clock, safe for concurrent use. The zero value starts at
// the zero time; New starts at a fixed, readable instant.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock at 2026-01-01T00:00:00Z.
func New() *Clock {
	return &Clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Seq returns an id source that yields prefix1, prefix2, ...; safe for
// concurrent use.
func Seq(prefix string) func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return prefix + strconv.Itoa(n)
	}
}
