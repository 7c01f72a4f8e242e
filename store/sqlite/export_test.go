package sqlite

import (
	"context"
	"database/sql"
	"runtime"
	"testing"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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

// AwaitWriter yields until the writer holds a batch of inBatch writes,
// not yet answered, and queued more wait behind it: with a test holding the
// database's write lock, the writer is stuck in BEGIN with that batch, and
// the queued writes will be its next one.
func AwaitWriter(tb testing.TB, s *Store, inBatch, queued int) {
	tb.Helper()
	var q, backlog int
	for range 1_000_000 {
		s.q.mu.Lock()
		q, backlog = len(s.q.ops), int(s.q.backlog.Load())
		s.q.mu.Unlock()
		if q == queued && backlog-q == inBatch {
			return
		}
		runtime.Gosched()
	}
	tb.Fatalf("%d writes in the batch, %d queued; want %d and %d", backlog-q, q, inBatch, queued)
}

// ListQueries are the page queries of list.go, by the filter each serves,
// for a test of their query plans.
var ListQueries = map[string]string{"all": qListAll, "task": qListTask, "state": qListState, "tenant": qListTenant}

// LimitLength lowers SQLite's limit on the length of a value or a row
// (SQLITE_LIMIT_LENGTH, 10^9 bytes by default) on the write connection to
// n, so that a test can reach it without allocating gigabytes. The writer
// must be idle: the limit is set on the pool's one connection between two
// transactions.
func LimitLength(tb testing.TB, s *Store, n int) {
	tb.Helper()
	c, err := s.wdb.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	if _, err := msqlite.Limit(c, sqlite3.SQLITE_LIMIT_LENGTH, n); err != nil {
		tb.Fatal(err)
	}
}

// HoldReaders takes every connection of the reader pool, so that the next
// read waits for one, and returns the function that gives them back.
func HoldReaders(tb testing.TB, s *Store) (release func()) {
	tb.Helper()
	n := s.rdb.Stats().MaxOpenConnections
	conns := make([]*sql.Conn, 0, n)
	for range n {
		c, err := s.rdb.Conn(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
	}
	return func() {
		for _, c := range conns {
			c.Close()
		}
	}
}

// AwaitReaderWaits yields until n calls in all have waited for a reader
// connection since Open. It gives up after a bounded number of yields.
func AwaitReaderWaits(tb testing.TB, s *Store, n int64) {
	tb.Helper()
	for range 1_000_000 {
		if s.rdb.Stats().WaitCount >= n {
			return
		}
		runtime.Gosched()
	}
	tb.Fatalf("%d waits for a reader connection; want %d", s.rdb.Stats().WaitCount, n)
}
