package jobtable

import (
	"runtime"
	"testing"
)

// blockedWaiters reports whether some waiter has taken the wakeup channel of
// job id, which it does just before it blocks.
func (t *Table[Req, Res]) blockedWaiters(id string) bool {
	j := t.lookup(id)
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done != nil
}

// AwaitWaiter yields until a waiter of job id has taken its wakeup channel,
// so that a test can complete the job while the waiter is blocked rather
// than before it looked. It gives up after a bounded number of yields.
func AwaitWaiter[Req, Res any](tb testing.TB, t *Table[Req, Res], id string) {
	tb.Helper()
	for range 1_000_000 {
		if t.blockedWaiters(id) {
			return
		}
		runtime.Gosched()
	}
	tb.Fatalf("no waiter blocked on %s", id)
}

// LockProbe returns a probe that reports whether the table's lock and the
// lock of job id are held, by anyone, when it is called. It looks the job
// up once, now, so calling the probe never waits for either lock. A test
// uses it to know that a goroutine it started has gone as far as the locks
// let it.
func LockProbe[Req, Res any](t *Table[Req, Res], id string) func() (table, job bool) {
	j := t.lookup(id)
	return func() (table, job bool) {
		if t.mu.TryLock() {
			t.mu.Unlock()
		} else {
			table = true
		}
		if j.mu.TryLock() {
			j.mu.Unlock()
		} else {
			job = true
		}
		return table, job
	}
}

// HoldJobLock locks the lock of job id, as a transition in progress would,
// and returns the function that unlocks it. The job must exist.
func HoldJobLock[Req, Res any](t *Table[Req, Res], id string) (release func()) {
	j := t.lookup(id)
	j.mu.Lock()
	return j.mu.Unlock
}

// DefaultNewID is the id source New uses when Config.NewID is nil.
var DefaultNewID = newID
