// Package ledger is the contract of the job ledger: the operations the HTTP
// layer, the stress drivers and the checkers call, whatever store keeps the
// jobs. A store is proved by running the conformance suite of package
// ledgertest against it unchanged.
//
// # Usage
//
//	l, err := ledger.NewMemory[Request, Response](ledger.Config{MaxQueue: 16})
//	defer l.Close()
//	id, _, err := l.Submit(ctx, ledger.Submission{TaskID: req.TaskID}, req) // ErrQueueFull when 16 are in flight
//
//	// the runner
//	req, err := l.TakeRequest(ctx, id) // once; ErrTerminal once the job ended
//	snap, err := l.Start(ctx, id)      // PENDING -> RUNNING
//	snap, err = l.Finish(ctx, id, res) // or Fail, Timeout
//
//	// the clients
//	snap, err = l.Wait(ctx, id) // blocks until terminal or ctx ends
//	res, snap, err := l.Result(ctx, id)
//
// # The contract
//
// Every store keeps these, and ledgertest checks each:
//
//   - Identity: Submit returns a fresh id that no other job of the store
//     has had, unguessable by default. A call naming an id no job has, an
//     invalid UTF-8 or NUL-holding one included, is ErrNotFound (LookupKey
//     of such a key too, and List with such a task id an empty page); a
//     store whose database cannot hold such text refuses it in Submit with
//     ErrUnstorable.
//   - Admission: at most Config.MaxQueue jobs are PENDING or RUNNING at
//     once; Submit's check of the bound and its taking of a slot are one
//     atomic step, so concurrent Submits never admit more.
//   - Tenants: a job belongs to Submission.Tenant. A Submission's
//     TenantMaxQueue, if positive, bounds its tenant's live jobs beside
//     MaxQueue: Submit checks and counts both in one atomic step
//     (ErrTenantQueueFull first, then ErrQueueFull). A context made by
//     WithTenant sees only that tenant's jobs: every call naming another
//     tenant's job answers ErrNotFound as for an id no job has, and List
//     leaves such jobs out. Keys are each tenant's own.
//   - Idempotency keys: Submit checks a Submission's key in the same atomic
//     step as the admission and the insertion, so concurrent Submits
//     with one new key create exactly one job; a replay (same key, same
//     digest) creates nothing and takes no slot, even with the queue full;
//     the same key with another digest is ErrKeyConflict; a key is held
//     exactly while its job is retained (at most one retained job per
//     key), and is free again once retention evicts the job.
//   - Listing: List walks the retained jobs newest first by admission, a
//     page at a time, each page below the cursor of the last (an admission
//     ordinal, never reused); a walk lists no job twice and lists every job
//     retained and matching throughout it.
//   - The state machine: PENDING -> RUNNING -> DONE | FAILED | TIMEOUT, and
//     PENDING may end directly. Terminal states are absorbing: a second
//     terminal call returns ErrTerminal and changes nothing; Start on a job
//     that is not PENDING returns ErrNotPending. Every transition returns the
//     snapshot it produced (a refused one, the job's current snapshot).
//   - The depth counts the admitted jobs that are not terminal; the
//     terminal transition is its only decrement, exactly once per job.
//   - Take-once: TakeRequest hands the request out once while the job is
//     live; the store, not the caller, releases the request once it is
//     taken or the job ends (ErrRequestTaken, ErrTerminal afterwards).
//   - Retention: a terminal job stays readable until evicted, lazily by
//     Submit: first those completed more than Config.JobTTL ago, then the
//     least recently completed beyond Config.MaxCompleted. A job that is not
//     terminal is never evicted.
//   - Waiting: Wait returns once the job is terminal, whenever that happens
//     relative to the call; a completion is never missed, and Wait never
//     polls.
//   - Ordering: CreatedAt <= StartedAt <= CompletedAt where set.
//
// A durable store adds: every call is acknowledged (returns) only after
// what it changed is committed, and a waiter is woken, and a reader sees a
// terminal state, only after the commit that made the job terminal.
// Across a restart, PENDING jobs stay PENDING (Recoverer lists them for the
// caller to run), RUNNING jobs end FAILED, and terminal jobs keep their
// state and result until evicted.
//
// # Stores
//
// NewMemory wraps package jobtable, the in-memory store and the default;
// its package doc says how it keeps the contract with atomics and locks.
// Package store/sqlite is the durable store of one process, on one SQLite
// file; package store/postgres the store that replicas of a server share,
// on one PostgreSQL database, with the Shared side (work, ends and the
// clock shared too) that AsShared finds. WithCodecs
// turns a store of bytes (a durable store) into a store of any request and
// result types.
package ledger
