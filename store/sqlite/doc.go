// Package sqlite is the durable job ledger: the contract of package ledger
// kept in one SQLite file, through modernc.org/sqlite (pure Go, no cgo).
// Jobs, accepted or finished, survive a restart of the process, and a call
// is acknowledged only once what it changed is on disk. Requests and
// results are bytes; ledger.WithCodecs turns a Store into a store of any
// request and result types.
//
// # Usage
//
//	s, err := sqlite.Open(ctx, "jobs.db", ledger.Config{MaxQueue: 16}, sqlite.Options{})
//	defer s.Close()
//	l := ledger.WithCodecs[Request, Response](s, reqCodec, resCodec)
//
//	pending, err := s.Recovered(ctx) // PENDING when the last process stopped: run them
//	id, _, err := l.Submit(ctx, ledger.Submission{TaskID: req.TaskID}, req) // returns once the job is on disk
//
//	// the runner, as with any ledger.Ledger
//	req, err := l.TakeRequest(ctx, id)
//	snap, err := l.Start(ctx, id)
//	snap, err = l.Finish(ctx, id, res)
//
// Open refuses, with a sentinel error, a file it must not use: one locked
// by another store (ErrLocked), one it cannot write (ErrUnwritable), one
// that is not a database or is damaged (ErrCorrupt), another program's
// database (ErrForeign), a schema newer than this code (ErrNewerSchema),
// a stored depth that disagrees with the jobs (ErrDepthMismatch), and one
// that lacks commits it acknowledged (ErrMissingCommits, see "Faults of
// the file"). It never replaces such a file with a fresh database. Repair
// (jobserver -repair) accepts a file refused for its depth or its commits
// as it is, and says what it changed.
//
// # The writer and group commit
//
// One goroutine, the writer, owns the one write connection. Every write
// (Submit, Start, Finish, Fail, Timeout) is queued for it, and its caller
// waits for the reply. The writer drains the queue into a batch of up to
// Options.BatchLimit writes, applies them in order inside one transaction,
// commits once, and only then answers every caller of the batch: group
// commit, one fsync for the batch. Once it has applied what was queued, it
// keeps the transaction open for the writes queued next, applying each as
// it comes, until the batch holds as many as the last one did or half as
// long as its last commit took has passed (gather.go), so that the callers
// its last commit answered join this batch instead of waiting out one
// more commit; a lone caller never waits. The database runs in WAL mode with
// synchronous=FULL, so a returned COMMIT is on disk. A failed commit
// answers every write of the batch with the error and leaves the writer's
// in-memory counters as the database has them.
//
// Admission is the writer's: it alone reads and changes the depth, so the
// queue-full check and the taking of a slot are one step, whatever the
// number of callers. The depth is stored in the meta table in every
// transaction that changes it, and checked against the jobs at Open.
//
// The reads (State, Snapshot, Result, TakeRequest, and Wait's) run on a
// pool of read-only connections, in parallel with the writer: WAL lets
// readers see the latest commit while a transaction is open. SQLite makes
// a commit visible to readers only after it has synced the log, so nobody
// reads a state that a crash could undo.
//
// # No wakeup before durability
//
// A waiter is woken, and a reader sees a terminal state, only after the
// commit that made the job terminal has returned. The wakeup of a job is a
// channel in Store.waiters, under Store.waitMu, closed once. Wait registers
// its channel first, and then reads the committed job; the writer, after
// its COMMIT has returned, closes the channels of the jobs the batch ended,
// under the same mutex. Either the waiter's read came after the commit, and
// it sees the terminal state and returns, or it came before, and then its
// registration came before the commit too, so the writer finds the channel
// and closes it: a completion at any moment before or during a wait is
// seen, and no wakeup can be lost. (Reading first and registering second
// would lose the wakeup of a commit between the two; closing before the
// commit would wake a waiter with a state that the commit may yet fail to
// make durable: the mutant store/sqlite/wake-before-commit.) The writer
// hands each waiter the job's final snapshot as its commit left it, so a
// woken waiter reads nothing and still gets the outcome if retention evicts
// the job right after.
//
// # Take-once
//
// TakeRequest hands a request out once per process: an in-memory mark
// under a mutex, taken together with the read of the committed row (take.go
// says why that makes it linearise with the other takes, Start and the
// job's end). The request stays in the file while the job is PENDING, so a
// job that never started runs again after a restart; Start of a taken job,
// and the job's end, release it.
//
// # Restart
//
// Open applies the restart in one transaction, before any call: every job
// RUNNING when the last process stopped ends FAILED with the error
// InterruptedByRestart (its runner died with the process, and nothing can
// tell how far it got), and leaves the depth; every PENDING job stays
// PENDING with its CreatedAt, and Recovered lists them, oldest first, for
// the caller to run; terminal jobs keep their state and result until
// evicted. One retention pass runs, as a Submit's would, so that a file
// written under another Config is brought within this one's bounds. A
// depth above MaxQueue found at Open (MaxQueue was lowered) is kept:
// those jobs were admitted; Submit admits again once the depth is below
// MaxQueue.
//
// # Time
//
// The store reads Config.Now once per batch, for every write of it. Times
// are stored as Unix nanoseconds and read back in UTC, without a monotonic
// reading. The store's clock never goes back: a batch's time is the
// clock's reading or the latest time already stored, whichever is later,
// so that CreatedAt <= StartedAt <= CompletedAt and the retention order
// survive a wall clock stepped back across a restart.
//
// # Errors and contexts
//
// A stored error is its message: Snapshot.Err is an error with the text of
// the error given to Fail or Timeout, not that error (errors.Is against it
// does not hold after it was stored). Every call honours its context: a
// caller whose context ends while its write is queued or being committed
// gets ctx.Err() at once, and the write's outcome is unknown: it may still
// commit, or not run at all (the writer skips a write whose context ended
// before it started it). A write that carries more than
// Options.MaxValueBytes (256 MiB at most) is refused with ErrTooLarge
// before it is queued, and changes nothing: in a batch, SQLite would
// refuse it and fail the batch's other writes with it, or the driver
// would store it truncated (config.go says why). Any error other than
// these, the ledger's sentinels and the context's is a failure of the
// database, with an unknown outcome.
//
// A write that meets a full disk (SQLITE_FULL), an I/O error or a busy
// database fails with its whole batch, which is rolled back: nothing
// changed, and the same write may commit once the file system takes
// writes again. Transient says which failures are of that kind, so that a
// caller tries them again (the job API does, until they commit); the
// store itself goes on serving, and never retries on its own.
//
// # Faults of the file
//
// The store checks, for two stats and a 21-byte write per batch, that the
// file the next Open of its path finds holds what it acknowledged:
//
//   - After each commit, before it answers anyone, the writer checks that
//     the path still names the file it holds (device and inode) and that
//     the log, REAL-wal, is still there. From the first time either is
//     not so, that batch and every later write get ErrDetached (the batch
//     committed into a file the next Open will not find: its outcome is
//     unknown to its callers, as for any failure of the database). A
//     removed, renamed or replaced file, or a removed log, gets nothing
//     acknowledged; reads go on from the file the store holds.
//   - meta's commit count grows by one in each transaction, and after each
//     commit the writer writes it, as the commit mark, into the lock file,
//     outside SQLite's files (mark.go). Open refuses a file that holds
//     fewer commits than the mark (ErrMissingCommits): a log removed or
//     cut short after a crash, a file removed, truncated, or replaced by
//     an older copy.
//   - Open refuses an empty database file beside a log that holds frames
//     (ErrMissingCommits) before SQLite opens it: SQLite would delete such
//     a log as stale and start a fresh database.
//   - Open runs PRAGMA quick_check: a file that is not a database, or whose
//     pages do not fit together (ErrCorrupt).
//
// Not detected: damage that leaves the pages well-formed and the count at
// or above the mark (a row changed in place; the database and its lock
// file replaced together by older copies); any damage once the mark is
// gone or older (the lock file removed, or the machine, not the process,
// crashed before the kernel wrote the last mark: it is written without an
// fsync, so a lower mark checks less and never refuses a whole file); and
// damage to a log while a store runs that leaves it in place. A clean
// Close leaves no log to damage: SQLite checkpoints it into the file. A
// refused Open changes no job, but SQLite may checkpoint what it could
// read of a cut log into the file as it closes; the refusal stands.
//
// # Close and locking
//
// Close stops the writer after the batch it is committing: writes still
// queued get ledger.ErrClosed, as does every call after Close, and a Wait
// blocked in the store returns ErrClosed, with the latest snapshot, at once
// (no completion can come after Close). Then it closes the connections and
// releases the lock. Every Close returns only once that is done, with the
// first one's error: a second Open may follow any of them. The lock is an
// exclusive flock(2) on the database file REAL, the path with its symbolic
// links resolved, and another on the sidecar file REAL.lock, held from
// Open to Close: a second store on the same file, in another process or
// this one, under the same name or through a symbolic link, fails to open
// with ErrLocked, with the lock file or without it, and so does a file
// with more than one hard link, which another store could hold under its
// other name (lock.go says why, and why not SQLite's own locking). The
// package therefore builds on Unix only.
//
// # Synchronisation
//
// Store's fields are documented beside the struct: what is immutable after
// Open, what the writer goroutine owns, what each mutex guards, and the
// lock order. The writer's in-memory view (view.go) is owned by the writer
// goroutine alone and published to Stats through atomics after each
// commit. CheckInvariants states the contract as code, with the clause
// names of package jobtable and spec/JobTable.tla.
package sqlite
