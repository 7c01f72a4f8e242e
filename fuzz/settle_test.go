package fuzz

import (
	"runtime"
	"strings"
	"sync/atomic"
)

// settleRounds bounds the rounds settleWaiters looks at the waiters.
const settleRounds = 100_000

// settleWaiters runs once every job has ended, and waits until each of the
// n waiters has either returned (returned counts them) or is blocked in
// jobtable's Wait. A waiter can be blocked there only on a wakeup that has
// not come: every job has ended, and ending a job wakes its waiters at once
// (their goroutines become runnable in the same step). So the verdict does
// not depend on timing: a waiter that is merely slow to be scheduled is
// runnable, never blocked, and settleWaiters yields until it has run. It
// returns the number of waiters blocked, and false if the waiters did not
// settle within settleRounds rounds.
func settleWaiters(returned *atomic.Int64, n int) (blocked int, settled bool) {
	buf := make([]byte, 1<<16)
	for range settleRounds {
		if int(returned.Load()) == n {
			return 0, true
		}
		m := runtime.Stack(buf, true)
		for m == len(buf) {
			buf = make([]byte, 2*len(buf))
			m = runtime.Stack(buf, true)
		}
		waiting, blocked := inWait(buf[:m])
		if blocked > 0 && waiting == blocked && int(returned.Load())+waiting == n {
			return blocked, true
		}
		runtime.Gosched()
	}
	return 0, false
}

// inWait counts, in a dump of every goroutine's stack, the goroutines
// inside jobtable's Table.Wait, and those of them blocked in its select.
func inWait(dump []byte) (waiting, blocked int) {
	for _, g := range strings.Split(string(dump), "\n\n") {
		if !strings.Contains(g, "/jobtable.(*Table[...]).Wait(") {
			continue
		}
		waiting++
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[select") {
			blocked++
		}
	}
	return waiting, blocked
}
