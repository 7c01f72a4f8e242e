package jobapi

import "time"

// Clock is the server's source of time: timestamps in the ledger, job
// deadlines and the durations in metrics all come from it. Tests inject a
// fake one and move it by hand; nothing in the server sleeps.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless stop
	// is called first; stop reports whether it prevented the call, as
	// time.Timer.Stop does.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
