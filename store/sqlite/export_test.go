package sqlite

import (
	"runtime"
	"testing"
)

// blockedWaiters reports whether some waiter of job id has read it live and
// is about to block on its wakeup.
func (s *Store) blockedWaiters(id string) bool {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	w := s.waiters[id]
	return w != nil && w.blocked > 0
}

// AwaitWaiter yields until a waiter of job id has found it live and blocks,
// so that a test can end the job while the waiter waits rather than before
// it looked. It gives up after a bounded number of yields.
func AwaitWaiter(tb testing.TB, s *Store, id string) {
	tb.Helper()
	for range 1_000_000 {
		if s.blockedWaiters(id) {
			return
		}
		runtime.Gosched()
	}
	tb.Fatalf("no waiter blocked on %s", id)
}

// queued is the number of writes waiting in the queue, not yet taken by
// the writer.
func (s *Store) queued() int {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	return len(s.q.ops)
}

// AwaitQueued yields until n writes wait in s's queue, the writer being
// held up elsewhere (a test holds the database's write lock).
func AwaitQueued(tb testing.TB, s *Store, n int) {
	tb.Helper()
	for range 1_000_000 {
		if s.queued() >= n {
			return
		}
		runtime.Gosched()
	}
	tb.Fatalf("%d writes queued, want %d", s.queued(), n)
}
