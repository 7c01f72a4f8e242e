package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/ledger"
)

// Store is the durable job ledger: the contract of package ledger on one
// SQLite file, with requests and results as bytes (ledger.WithCodecs turns
// it into a store of any types). All methods are safe for concurrent use.
//
// Synchronisation, field by field:
//
//   - cfg, opts, path, lock, wdb, rdb, writes, reads, recovered, maxDepth:
//     set by Open, read-only afterwards (wdb and writes are used by the
//     writer goroutine only, once Open has started it; database/sql makes
//     rdb and reads safe for concurrent use).
//   - q: the write queue, with its own mutex; callers push, the writer
//     takes. gather and detached are the writer goroutine's alone.
//   - pub: atomics, stored by the writer after each commit, loaded by
//     Stats and CheckInvariants.
//   - takeMu guards taken, and is held across each TakeRequest's read of
//     the job (see take.go for why).
//   - waitMu guards waiters and each waiter's count.
//   - closed: atomic, set once by Close before it closes quit; quit is
//     closed once, by Close.
//   - writerDone is closed by the writer goroutine when it returns.
//   - closeErr is written once, by the first Close, before it closes
//     released; every Close reads it after receiving from released.
//
// Lock order: takeMu and waitMu are never held together, and neither is
// held while waiting for the writer or for a reader connection: a reader
// connection comes first (TakeRequest gets its own before takeMu, and
// CheckInvariants gives its own back before it takes either); q.mu is
// held only inside queue's own methods. The writer takes each of them
// briefly, never two at once, and never waits for a reader connection.
//
// Invariants (CheckInvariants, named as jobtable's and spec/JobTable.tla's):
//   - pub.depth, meta's depth and the number of jobs not terminal agree
//     (DepthInv), and 0 <= depth <= maxDepth (DepthBoundInv);
//   - a job is terminal exactly when it has a completion time and a seq
//     (PayloadConsistencyInv); its times are ordered (TimestampOrderInv);
//   - a terminal job holds no request (TerminalReleasesRequestInv), a
//     PENDING one holds its own (RequestOnceInv);
//   - no waiter stays registered on a job that has ended (NoLostWakeupInv).
type Store struct {
	cfg       ledger.Config
	opts      Options
	path      string
	lock      *fileLock
	wdb, rdb  *sql.DB
	writes    *[nQueries]*sql.Stmt
	reads     *readStmts
	recovered []ledger.Snapshot // PENDING at Open, oldest first
	maxDepth  int               // max(MaxQueue, 0, depth found at Open)

	q      *queue
	gather gatherer // the writer goroutine's
	pub    published

	// detached is the error of every write once the store's path no
	// longer names its file (nil until then); the writer goroutine's.
	detached error

	takeMu sync.Mutex
	taken  map[string]struct{}

	waitMu  sync.Mutex
	waiters map[string]*waiter

	closed     atomic.Bool
	quit       chan struct{}
	writerDone chan struct{}
	released   chan struct{} // closed once the first Close has released everything
	closeErr   error         // what the first Close's release returned
}

var (
	_ ledger.Ledger[[]byte, []byte] = (*Store)(nil)
	_ ledger.Checker                = (*Store)(nil)
	_ ledger.Recoverer              = (*Store)(nil)
)

// do queues the write o and waits for its reply or for ctx. A caller whose
// ctx ends first gets ctx.Err() at once; its write may still commit, or may
// not run at all (the writer skips a write whose ctx has ended before it
// starts it): the outcome is unknown, as the ledger contract says.
func (s *Store) do(ctx context.Context, o *op) (ledger.Snapshot, error) {
	r := s.doReply(ctx, o)
	return r.snap, r.err
}

// doReply is do, returning the whole reply. A write over
// Options.MaxValueBytes is refused here, before it is queued, so that it
// cannot fail the batch it would have joined; a write queued carries the
// store's own copy of its payload.
func (s *Store) doReply(ctx context.Context, o *op) reply {
	if s.closed.Load() {
		return reply{err: ledger.ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return reply{err: err}
	}
	if o.kind != opSubmit && len(o.id) > s.opts.MaxValueBytes {
		return reply{err: ledger.ErrNotFound} // Submit refuses such an id
	}
	if n := o.size(); n > s.opts.MaxValueBytes {
		return reply{err: fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, n, s.opts.MaxValueBytes)}
	}
	o.payload = bytes.Clone(o.payload)
	o.ctx = ctx
	o.reply = make(chan reply, 1)
	if !s.q.push(o) {
		return reply{err: ledger.ErrClosed}
	}
	select {
	case r := <-o.reply:
		if r.panicked != nil {
			panic(r.panicked)
		}
		return r
	case <-ctx.Done():
		return reply{err: ctx.Err()}
	}
}

// Submit admits a job carrying req and returns its id, or ErrQueueFull, once
// the job is committed. It evicts expired terminal jobs first. The store
// keeps its own copy of req. Every write (Submit, Finish, Fail, Timeout)
// that carries more than Options.MaxValueBytes is refused with ErrTooLarge
// and changes nothing. An idempotency key (see ledger.Ledger) is checked
// in the writer's transaction that admits and inserts the job, and the
// file's unique index on it holds at most one job per key. A replay
// commits nothing; it does use up one id of Config.NewID.
func (s *Store) Submit(ctx context.Context, sub ledger.Submission, req []byte) (string, bool, error) {
	if s.closed.Load() {
		return "", false, ledger.ErrClosed
	}
	if sub.Key == "" {
		sub.Digest = ""
	}
	id := s.cfg.NewID()
	r := s.doReply(ctx, &op{kind: opSubmit, id: id, taskID: sub.TaskID, payload: req, key: sub.Key, digest: sub.Digest})
	if r.err != nil {
		return "", false, r.err
	}
	return r.snap.ID, r.replayed, nil
}

// Start moves a PENDING job to RUNNING, or returns ErrNotPending with its
// snapshot (ErrNotFound, zero snapshot, for a job the store does not hold).
func (s *Store) Start(ctx context.Context, id string) (ledger.Snapshot, error) {
	return s.do(ctx, &op{kind: opStart, id: id})
}

// Finish ends a job that is not terminal DONE with res (the store keeps its
// own copy); ErrTerminal with the job's snapshot if it already ended.
func (s *Store) Finish(ctx context.Context, id string, res []byte) (ledger.Snapshot, error) {
	return s.do(ctx, &op{kind: opFinish, id: id, payload: res})
}

// Fail ends a job that is not terminal FAILED with cause, stored as its
// message; ErrTerminal with the job's snapshot if it already ended.
func (s *Store) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return s.do(ctx, &op{kind: opFail, id: id, cause: errText(cause)})
}

// Timeout ends a job that is not terminal TIMEOUT with cause, stored as its
// message; ErrTerminal with the job's snapshot if it already ended.
func (s *Store) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	return s.do(ctx, &op{kind: opTimeout, id: id, cause: errText(cause)})
}

// Recovered lists the jobs that were PENDING when the store was opened,
// oldest first: the caller runs them, their deadlines still counted from
// CreatedAt. A store opened on a new file has none.
func (s *Store) Recovered(context.Context) ([]ledger.Snapshot, error) {
	if s.closed.Load() {
		return nil, ledger.ErrClosed
	}
	return append([]ledger.Snapshot(nil), s.recovered...), nil
}

// Stats is a cheap view for metrics, from the counters the writer keeps
// after each commit; its fields are loaded one after another, not as one
// atomic view. The eviction counts are since Open.
func (s *Store) Stats() ledger.Stats {
	return ledger.Stats{
		Depth:      int(s.pub.depth.Load()),
		Jobs:       int(s.pub.jobs.Load()),
		Retained:   int(s.pub.retained.Load()),
		EvictedTTL: s.pub.evictedTTL.Load(),
		EvictedLRU: s.pub.evictedLRU.Load(),
	}
}

// WriteStats counts the writer's work since Open.
type WriteStats struct {
	// Commits is the number of transactions committed, each one fsync of
	// the log (a batch of refusals only is rolled back and not counted).
	Commits uint64
	// Writes is the number of writes (Submit, Start, Finish, Fail,
	// Timeout) those transactions carried, refused ones included.
	Writes uint64
	// Backlog is the number of writes queued or in the batch being
	// committed, not yet answered: the writer's backlog, now.
	Backlog int
}

// WriteStats returns the writer's counters: Writes/Commits is the mean
// batch size that group commit achieved.
func (s *Store) WriteStats() WriteStats {
	return WriteStats{
		Commits: s.pub.commits.Load(),
		Writes:  s.pub.writes.Load(),
		Backlog: int(s.q.backlog.Load()),
	}
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stops the writer, after the batch it is committing, if any; writes
// still queued get ErrClosed, as does every call after Close, and a Wait
// blocked in the store returns ErrClosed with the latest snapshot at once.
// Then it closes the connections (SQLite checkpoints the log into the
// database file) and releases the lock. Close is idempotent: a later or
// concurrent call returns once the first has released everything, with
// its error, so that an Open after any Close returns finds the file free.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		close(s.quit)
		<-s.writerDone
		traceClosed()
		s.closeErr = s.release()
		close(s.released)
	}
	<-s.released
	return s.closeErr
}

// release closes what Open opened, in the reverse order.
func (s *Store) release() error {
	var errs []error
	if s.reads != nil {
		s.reads.close()
	}
	if s.writes != nil {
		closeStmts(s.writes[:])
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	errs = append(errs, s.lock.unlock())
	return errors.Join(errs...)
}
