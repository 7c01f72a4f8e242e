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
// apply each once. A replica that upgrades a ledger other replicas are
// using locks the ledger row before the migrations' DDL, as every write
// locks it before the jobs it changes, so the upgrade waits for the
// writes in flight and never deadlocks with them. The ledger row holds the depth and the next completion
// sequence; the jobs table one row per job (migrations/0001_jobs.sql).
//
// # Writes: one batch, one transaction, one round trip
//
// Submit, the ends and Claim are queued for the Store's
// writer goroutine, which sends every write queued, up to a bound, as one
// pipelined batch: one round trip and one implicit transaction (writer.go).
// The batch locks the ledger row first, so batches of all replicas are one
// at a time, and holds it only while the server runs the batch and
// flushes its commit: one flush for all its writes, and no client round
// trip under the lock. In the batch, in order: the ends (each job with no
// completion seq yet ends, with the next seq; the depth decremented; one
// pg_notify per end, in seq order); the admissions, decided one by one in
// queue order against MaxQueue (a keyed one whose key a retained job holds
// is answered with that job and takes no slot), then the retention pass;
// the claims. Every caller is answered after the commit. No write locks a
// job row before the ledger row, and the ends lock their rows in the
// order of n, as renewal and the reaper do, so no two writes deadlock.
// Every connection of a Store, the listener's included, runs READ
// COMMITTED whatever the database's or the role's default (Open sets the
// session's default_transaction_isolation): the re-checks of a write
// blocked behind another read the latest commit only at that level.
//
// A batch that fails on the server rolled back: it is tried again if the
// failure is transient (a lost connection, a shutdown, a lock timeout, a
// deadlock), else each write alone, so that one write the database
// refuses fails no other. A batch whose outcome is unknown (the
// connection failed after it was sent) may have committed: its ends are
// tried again (a refused retry whose job ended as it asked is reported as
// done), its admissions and claims answered with the error. Tries go on
// with backoff for at most Options.Lease.
//
// # Waiting
//
// Each Store holds one listener connection, outside the pool, that LISTENs
// on the channels jobledger_end (ends) and jobledger_work (admissions;
// see "Replicas") before Open returns. A Wait registers locally, then
// reads the row, then blocks; the notification of the end,
// delivered only after its commit, carries the job's id and its final
// snapshot, which wakes the local waiters of that id with the outcome
// (so it survives an eviction right after). When the listener's
// connection fails, notifications sent meanwhile are lost: until it has
// reconnected and LISTENs again, every blocked Wait reads its row every
// Lease/3, and then every local waiter re-reads its job once. A
// connection that fails silently (half-open TCP: the server's host
// crashed, a route dropped) is noticed too: the listener waits at most
// Options.Lease/3 for a notification, then pings the connection under the
// same bound, and a failed ping is a failed connection. So a Wait sees an
// end within about Lease of its commit whatever befalls the listener.
// ListenerHealth reports the listener's state, and Options.Logger gets
// each change of it once. A Wait whose context ends reads the row once
// more and returns the job as it is then. Nothing else polls. Close wakes
// every blocked Wait with ErrClosed at once.
//
// # Faults
//
// No replica, stopped or cut off, holds the others up for long: every
// connection of a Store, the listener's included, is bounded from
// Options.Lease (conn.go). The server ends a session that is idle inside
// a transaction for Lease/3 (idle_in_transaction_session_timeout), and its
// locks with it, so a stopped replica loses the ledger row within Lease/3
// of its last statement; a lock wait gives up after 2·Lease/3
// (lock_timeout, SQLSTATE 55P03), so a write queued behind a stopped
// replica outlasts that bound and gets the row; and either end drops a
// connection whose peer vanished (TCP_USER_TIMEOUT Lease/3; keepalives
// after Lease/3, every Lease/9, three unanswered, in whole seconds):
// within Lease/3 with data in flight, about 2·Lease/3 when idle. Behind
// PgBouncer, which refuses startup parameters it does not know, list
// these and default_transaction_isolation in its ignore_startup_parameters
// and set them on the database role (ALTER ROLE ... SET) instead.
//
// # Take-once
//
// TakeRequest sets the row's taken mark with one UPDATE whose WHERE clause
// is the whole check, so of concurrent takes on any replicas one wins.
// The request stays in the row while the job is PENDING (Start of a taken
// job, or the job's end, releases it). A take gives the job a lease of
// the taking replica (see "Replicas").
//
// # Idempotency keys
//
// A keyed admission looks its key up in the batch that admits it, under
// the ledger row's lock: two keyed submits with one new key, on any
// replicas, create one job (one batch never holds two writes of one key).
// A unique index on the key states the same in the database, and a key
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
// before leases existed (schema 2 and earlier) have no owner and count as the opening
// replica's. Other names' jobs are left alone: their leases protect them
// while their replicas live, and the reaper ends them when not (see
// "Replicas"). With the default name, the one of a single replica, a
// restart is the SQLite store's; two live Stores under one name are one
// replica to the database, and the later Open fails the earlier's jobs.
//
// # Replicas
//
// Each Store is a replica, named by Options.Replica; several share the
// database's jobs through ledger.Shared, which Store implements. A job
// that is RUNNING, or PENDING with its request taken, holds a lease: its
// owner, the replica that took, started or claimed it, and an expiry,
// Options.Lease after that moment in the store's time (the database's
// clock, unless Config.Now is set), both in the job's row
// (migrations/0003_leases.sql). An end clears the expiry. Each Store's
// keeper goroutine (lease.go), every Lease/3 until Close, renews in one
// statement the leases of the jobs the Store holds: those its TakeRequest,
// Start or Claim handed to its caller and that no end tried here has let
// go since: an end with a known outcome, or two in a row whose outcome is
// unknown (held.go). Then it runs the reaper (reap.go): one transaction that
// locks the ledger row, then the rows of the live jobs whose lease
// lapsed, but those the Store holds, and ends each FAILED with WorkerLost
// as any end does (the state guard, the next seq, the decrement,
// pg_notify). A Store never reaps the jobs it holds: it is alive, since
// it is reaping. It does reap its own replica's jobs that nobody here
// runs: one whose Claim or TakeRequest committed but whose reply was lost
// (the caller got an error, and never learnt the id), one whose ends all
// failed (the caller gave up), so neither holds its slot and its Waits
// for as long as the replica lives.
//
// Claim takes the oldest PENDING job whose request nobody took, and takes
// and starts it under a lease of this replica, in one statement of its
// batch that locks it FOR UPDATE SKIP LOCKED (claim.go). The job is held
// before its request is handed over, so its lease is renewed during a
// long transfer. Work is signalled when a
// job may have become claimable: each admission's transaction notifies
// jobledger_work, and so does a restart that releases taken requests; a
// listener reconnect signals it too, since notifications were lost. OnEnd
// receives the final snapshot of every end notification, from the
// listener goroutine; Now reads the store's clock (work.go).
//
// What holds exactly, whatever the timing:
//
//   - Admission, the ends, take-once, waiting and retention are as above:
//     each is one statement or one transaction on the database, whichever
//     replica runs it.
//   - A job is claimed at most once: Claim changes only a row that, once
//     locked, is re-checked on the latest commit (READ COMMITTED) and is
//     still PENDING and not taken; a take, start, claim or end committed
//     first makes the re-check fail, and the row is passed over.
//   - A job is reaped only if its lease had lapsed when the reaper locked
//     its row: the lease compared is the latest committed one, so a
//     renewal that committed first saves the job, and one that comes
//     later waits for the reaper's commit and then finds the job ended.
//     Renewal and reaper lock rows in one order (n), so they never
//     deadlock.
//   - Every job ends once: a reaped job's late end from its owner gets
//     ErrTerminal, through the state guard, and a reaped job, terminal,
//     is never claimed.
//   - Replicas need not agree on time: when Config.Now is nil, as in
//     production, every lease is set, renewed and compared on the
//     database's clock (a Config.Now, a test's clock, must then be the
//     same for every replica).
//
// What depends on timing: a replica paused, or cut off from the database,
// for longer than its lease loses its jobs to the reaper; their model
// calls may run on, but their ends are refused (ErrTerminal). The keeper
// renews every Lease/3, leaving two renewals of slack. A replica that
// dies has its jobs failed between Lease and Lease + Lease/3 later (the
// lapse, then a reaper's next tick), or at once when it opens again under
// its name. Lease does not bound a job's run time: a live replica renews
// for as long as the job runs, while its caller holds it. A job of this
// replica that nobody here runs (a lost Claim reply, failed ends) is
// failed between Lease and Lease + Lease/3 after its last renewal, by any
// replica's reaper, its own included. Two live Stores under one name are
// one replica to the database: each reaps only the other's jobs whose
// leases lapsed, and the later Open fails the earlier's (see "Restart"). Give each replica a name of
// its own that it keeps across its restarts. The notifications that wake
// waiters, Work and OnEnd are lost while a listener is disconnected; all
// three are made up for at the reconnect (OnEnd by the completion seqs:
// the ends it missed are read from their rows, but for those retention
// deleted meanwhile).
//
// # Text
//
// PostgreSQL text holds valid UTF-8 without NUL bytes; the store sends no
// other string to the database (text.go). An id or idempotency key that
// no job can have is answered ErrNotFound without a query, a List task
// filter that no job can have is an empty page, and a Submit whose task
// id, key or digest cannot be stored is refused
// with ledger.ErrUnstorable, admitting nothing. The error message of an
// end (Fail, Timeout) is stored with each NUL byte and each run of
// invalid UTF-8 replaced by U+FFFD, so an end never fails for its cause's
// text.
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
// In each batch that admits a job (and once in Open), after the
// admissions: first the terminal jobs completed at least JobTTL ago, then
// the lowest completion sequences beyond MaxCompleted. Stats counts the
// evictions of this Store; its depth and job counts are read from the
// database.
//
// # Errors and contexts
//
// Every call honours its context: a call whose context ends returns
// ctx.Err(), and its outcome is unknown (its batch may still commit). Wait is the one exception, in part: its reads of the job's
// row are not cut short by its context (so that a job that ended is
// reported as ended, even by a Wait whose context had already ended), so a
// database that hangs holds a Wait past its context for as long as one
// read hangs. Any error other than the ledger's sentinels and the
// context's is a failure of the database, with an unknown outcome.
package postgres
