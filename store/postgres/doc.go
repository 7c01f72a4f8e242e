// Package postgres is the job ledger on a PostgreSQL database, through
// pgx (pgxpool): the contract of package ledger, kept so that several
// Stores, in one process or in several replicas of a server, can share one
// ledger. Requests and results are bytes; ledger.WithCodecs turns a Store
// into a store of any request and result types.
//
// # Usage
//
//	s, err := postgres.Open(ctx, "postgres://user@host/db", ledger.Config{MaxQueue: 16}, postgres.Options{})
//	defer s.Close()
//	l := ledger.WithCodecs[Request, Response](s, reqCodec, resCodec)
//
// Open refuses, with a sentinel error, a database it must not use: one it
// cannot reach (ErrUnreachable), another program's tables (ErrForeign), a
// schema newer than this code (ErrNewerSchema), a stored depth that
// disagrees with the jobs (ErrDepthMismatch).
//
// # Schema and migrations
//
// The migrations are embedded (migrations/NNNN_name.sql), versioned in the
// table jobledger_schema, and applied by Open in one transaction that
// holds a transaction-level advisory lock, so replicas starting together
// apply each once. The ledger row holds the depth and the next completion
// sequence; the jobs table one row per job (migrations/0001_jobs.sql).
//
// # Admission, ends and their order
//
// Admission is one statement that checks and increments together,
// UPDATE ledger SET depth = depth + 1 WHERE depth < MaxQueue, followed in
// the same transaction by a retention pass and the insertion. A terminal
// transition is one transaction: it locks the ledger row, makes the job
// terminal only if it has no completion sequence yet (PENDING or RUNNING),
// with its payload, completion time and sequence, releases its request,
// decrements the depth and calls pg_notify with the job (write.go). Every
// write that changes the depth locks the ledger row first, so those writes
// are one at a time across all replicas, and no write locks a job row
// before it, so none deadlock. Under READ COMMITTED a write blocked on the
// ledger row re-reads it, and each later statement reads the latest
// commit, so nothing is decided on a stale read.
//
// # Waiting
//
// Each Store holds one listener connection, outside the pool, that LISTENs
// on the channel jobledger_end before Open returns. A Wait registers
// locally, then reads the row, then blocks; the notification of the end,
// delivered only after its commit, carries the job's id and its final
// snapshot, which wakes the local waiters of that id with the outcome
// (so it survives an eviction right after). When the listener's
// connection fails it reconnects, LISTENs again, and then wakes every local
// waiter to re-read its job, since notifications sent meanwhile are lost.
// A Wait whose context ends reads the row once more and returns the job as
// it is then. Nothing polls. Close wakes every blocked Wait with
// ErrClosed at once.
//
// # Take-once
//
// TakeRequest sets the row's taken mark with one UPDATE whose WHERE clause
// is the whole check, so of concurrent takes on any replicas one wins.
// The request stays in the row while the job is PENDING (Start of a taken
// job, or the job's end, releases it).
//
// # Idempotency keys
//
// SubmitKeyed locks the ledger row, which every admission of every store
// on the database takes first, then looks the key up and, if no retained
// job holds it, admits and inserts the job holding it, in one transaction:
// two keyed submits with one new key, on any replicas, create one job. A
// unique index on the key states the same in the database, and a key
// leaves with its row when retention deletes the job.
//
// # Restart
//
// Open applies the SQLite store's restart to the jobs of its own replica
// name (Options.Replica), under the advisory lock: that name's earlier
// life is dead, so every job it was running ends FAILED with
// InterruptedByRestart (with the decrement and a notification), and the
// requests it had taken are released (the jobs are PENDING and claimable
// again: Recovered lists them). One retention pass runs. Jobs started
// before leases existed (schema 2) have no owner and count as the opening
// replica's. Other names' jobs are left alone: their leases protect them
// while their replicas live, and the reaper ends them when not (see
// "Replicas"). With the default name, the one of a single replica, a
// restart is the SQLite store's; two live Stores under one name are one
// replica to the database, and the later Open fails the earlier's jobs.
//
// # Time
//
// Config.Now, when set, is the clock of every write (the conformance
// suite's fake clock). When nil, unlike the other stores, the store uses
// the database's clock (clock_timestamp()), so that replicas need not
// agree on time: creation, start and completion times, and the TTL
// cutoff, all come from the server. Times are stored as Unix nanoseconds
// (the database clock gives microseconds); a start or completion time is
// never before the job's earlier times, even if the clock stepped back.
//
// # Retention
//
// Lazily in Submit (and once in Open), inside the admission's transaction:
// first the terminal jobs completed at least JobTTL ago, then the lowest
// completion sequences beyond MaxCompleted. Stats counts the evictions of
// this Store; its depth and job counts are read from the database.
//
// # Errors and contexts
//
// Every call honours its context: a call whose context ends returns
// ctx.Err(), and its outcome is unknown (its transaction may have
// committed). Any error other than the ledger's sentinels and the
// context's is a failure of the database, with an unknown outcome.
package postgres
