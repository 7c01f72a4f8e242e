// Package postgres is the job ledger on a PostgreSQL database, through
// pgx (pgxpool): the contract of package ledger, kept so that several
// Stores, in one process or in several replicas of a server, can share one
// ledger. Requests and results are bytes; ledger.WithCodecs turns a Store
// into a store of any request and result types.
//
// # Usage
//
//	s, err := postgres.Open(ctx, "postgres://user@host/db", ledger.Config{MaxQueue: 16}, postgres.Options{Replica: "r1"})
//	defer s.Close()
//	l := ledger.WithCodecs[Request, Response](s, reqCodec, resCodec)
//
// Open refuses, with a sentinel error, a database it must not use: one it
// cannot reach (ErrUnreachable), another program's tables (ErrForeign), a
// schema newer than this code (ErrNewerSchema), a stored depth that
// disagrees with the jobs (ErrDepthMismatch). It applies the embedded
// migrations under an advisory lock, so replicas starting together apply
// each once.
//
// Each Store is a replica, named by Options.Replica: give each replica a
// name of its own and keep it across its restarts. Store implements
// ledger.Shared (Claim, Work, OnEnd, Now), through which replicas share
// the database's jobs.
//
// # How it keeps the contract
//
// Every rule is one statement or one transaction on the database,
// whichever replica runs it. Submit, the ends and Claim are queued for the
// Store's writer goroutine, which sends everything queued as one pipelined
// batch: one round trip, one transaction that locks the ledger row first,
// one flush; every caller is answered after the commit. Every connection
// runs READ COMMITTED, whatever the database's default. A Wait registers,
// reads the row, and blocks until the end's notification (pg_notify,
// delivered at the commit, carrying the final snapshot); while the
// listener is down, blocked Waits read their rows every Options.Lease/3
// (ListenerHealth reports it). A job RUNNING, or PENDING with its request
// taken, holds a lease of its replica, renewed every Lease/3 while the
// replica lives and its caller holds the job; any replica's reaper ends a
// job whose lease lapsed FAILED with WorkerLost. Open ends the jobs its
// own replica name was running FAILED with InterruptedByRestart and
// releases the requests it had taken (Recovered lists them). When
// Config.Now is nil, times come from the database's clock, so replicas
// need not agree on time. Every connection is bounded from Options.Lease,
// so no replica, stopped or cut off, holds the others up for long.
//
// PostgreSQL text holds valid UTF-8 without NUL bytes, and no other string
// reaches it: an id or key no job can have is ErrNotFound, a Submit whose
// task id, key or digest cannot be stored is ledger.ErrUnstorable, and an
// end's message is stored with such bytes replaced by U+FFFD.
//
// Every call honours its context: a call whose context ends returns
// ctx.Err(), and its outcome is unknown. Any error other than the
// ledger's sentinels and the context's is a failure of the database.
//
// docs/architecture.md ("The PostgreSQL store") says how each rule is
// kept; docs/scaling.md says what holds exactly across replicas, what
// depends on timing, and the bound each timeout gives.
package postgres
