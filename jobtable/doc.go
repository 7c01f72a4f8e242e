// Package jobtable is an in-memory ledger for asynchronous jobs: identity,
// admission against a bounded queue, the job state machine, retention of
// finished jobs, and waiting for completion. It runs nothing itself: its
// owner (an HTTP server, a worker pool) executes each job and reports the
// outcome, and reads the ledger to answer clients.
//
// # Usage
//
//	t, err := jobtable.New[Request, Response](jobtable.Config{MaxQueue: 16})
//	id, err := t.Submit(req.TaskID, req) // ErrQueueFull when 16 are in flight
//
//	// the runner
//	req, err := t.TakeRequest(id) // the payload, moved out once; ErrTerminal once ended
//	snap, err := t.Start(id)      // PENDING -> RUNNING, and the snapshot it made
//	snap, err = t.Finish(id, res) // or Fail(id, err), Timeout(id, err); likewise
//
//	// the clients
//	state, err := t.State(id)              // cheapest: the state alone, lock-free
//	snap, err := t.Snapshot(id)            // cheap, consistent view
//	snap, err = t.Wait(ctx, id)            // blocks until terminal or ctx ends
//	res, _, err := t.Result(id)            // repeatable until evicted
//
// # States
//
// A job is PENDING when admitted, RUNNING once started, and ends DONE, FAILED
// or TIMEOUT (the states are package ledgertype's, the one package outside
// the standard library that jobtable imports). Only PENDING may enter RUNNING; any non-terminal state may
// terminate; terminal states are absorbing, and a second terminal call
// returns ErrTerminal and changes nothing. Each transition returns the
// snapshot it produced (a refused one, the job's current snapshot), so its
// caller can report the outcome even if the job is evicted right after.
//
// A job that ends drops its request: TakeRequest on a terminal job returns
// ErrTerminal, and a job cancelled while PENDING holds no payload while it
// is retained. Its timestamps are ordered, CreatedAt <= StartedAt <=
// CompletedAt where set, because Start and the terminal transition read the
// clock under the job's lock.
//
// # Admission and retention
//
// At most Config.MaxQueue jobs are PENDING or RUNNING at once; Submit returns
// ErrQueueFull beyond that. Terminal jobs are kept so their outcome can be
// read, and evicted lazily by Submit: first those older than Config.JobTTL
// since completion, then the least recently completed beyond
// Config.MaxCompleted. A job that is not terminal is never evicted.
//
// # Concurrency contract
//
// All methods are safe for concurrent use, and five invariants hold:
//
//  1. A job's state is an atomic value, read without a lock for cheap
//     terminal checks.
//  2. One mutex per job guards its payload, error and completion time and
//     its wakeup; every transition writes them, publishes the state and
//     wakes waiters in one critical section. A waiter checks the state and
//     takes the wakeup channel (closed once, never re-made) in one critical
//     section under the same mutex, so it either sees the terminal state or
//     holds a channel that the transition will close: a completion at any
//     moment before or during a wait is seen, and a wakeup cannot be lost.
//     The terminal transition writes the job's final snapshot first, then
//     stores the terminal state, then closes the wakeup channel, and
//     nothing writes a terminal job again: a reader that loaded the
//     terminal state, or a waiter woken by the close, reads the final
//     snapshot without the lock, ordered after its writing by the atomic
//     store or by the close.
//  3. The queue depth is an atomic counter and admission is a
//     compare-and-swap loop: the queue-full check and the increment are one
//     step.
//  4. The terminal transition is the only depth decrement, exactly once.
//  5. The table mutex guards only the retention list and makes its holder
//     the one writer of the id map (eviction and insertion, in that order);
//     a lookup takes no lock at all, so readers never contend and never
//     wait for a writer. The lock order is always table, then job.
//
// docs/architecture.md explains each, and spec/JobTable.tla checks them,
// lock-free lookups and terminal reads included; make spec-mutants shows
// that it refutes the bugs it exists for (docs/spec.md).
package jobtable
