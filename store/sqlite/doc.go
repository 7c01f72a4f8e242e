// Package sqlite is the durable job ledger: the contract of package ledger
// kept in one SQLite file, through modernc.org/sqlite (pure Go, no cgo).
// Jobs, accepted or finished, survive a restart of the process, and a call
// is acknowledged only once what it changed is on disk. Requests and
// results are bytes; ledger.WithCodecs turns a Store into a store of any
// request and result types. It builds on Unix only (flock).
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
// Open refuses, with a sentinel error, a file it must not use: one locked
// by another store (ErrLocked), one it cannot write (ErrUnwritable), one
// that is not a database or is damaged (ErrCorrupt), another program's
// database (ErrForeign), a schema newer than this code (ErrNewerSchema), a
// stored depth that disagrees with the jobs (ErrDepthMismatch), and one
// that lacks commits it acknowledged (ErrMissingCommits). It never
// replaces such a file with a fresh database; Repair accepts a file
// refused for its depth or its commits as it is. Once the path no longer
// names the file the store holds, or its log is gone, every write fails
// with ErrDetached.
//
// # How it keeps the contract
//
// One goroutine, the writer, owns the one write connection: every write is
// queued for it, applied in order in one transaction with the others of
// its batch, and answered only after the batch's COMMIT returned (group
// commit; WAL with synchronous=FULL, so a returned COMMIT is on disk).
// Admission is the writer's alone, so the queue-full check and the taking
// of a slot are one step. Reads run on read-only connections and see
// committed rows only. A waiter registers, then reads the committed row;
// the writer wakes it, with the job's final snapshot, after the commit
// that ended the job: no wakeup is lost and none comes before durability.
// Open ends every job RUNNING when the last process stopped FAILED
// (InterruptedByRestart) and keeps the PENDING ones for Recovered.
//
// Every call honours its context; a write whose context ends returns
// ctx.Err() with its outcome unknown. Store.Transient says which failures (a
// full disk, an I/O error) a caller may try again; the store never
// retries on its own. Close answers queued writes and blocked Waits with
// ledger.ErrClosed at once.
//
// docs/architecture.md ("The durable store") says how each rule is kept
// and why; docs/http.md ("Restarts with sqlite:PATH") says what each fault
// of the file does.
// Store's fields say, beside the struct, what guards each; CheckInvariants
// states the contract as code, with the clause names of spec/JobTable.tla.
package sqlite
