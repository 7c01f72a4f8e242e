// Package linearizability checks concurrent histories of a job ledger with
// porcupine against sequential models. It is the checker only: package
// stress records the histories (through the in-process table or the HTTP
// API), and this package depends on no ledger. Its operations, outcomes
// and job states (Input, Output, State) are its own.
//
// A history is a list of porcupine operations, each with a call and a return
// time, the client that issued it, its Input and its Output; an operation
// that never returned is pending forever (Return = Pending). Three models
// judge it:
//
//   - JobModel, partitioned by job id: the state machine of one job
//     (absorbing terminal states, Start only from PENDING, exactly one
//     winning terminal call, snapshots and results consistent with the
//     state, the request taken once, disappearance only when terminal).
//   - AdmissionModel, global: a projection onto the queue-depth counter.
//     Accepted submits add one, winning terminal calls remove one, and a
//     rejected submit is legal only at the bound. Partitioning by job is
//     unsound for this counter, which couples every job, so it is checked
//     as one history, by a sweep specialised to the bounded counter (linear
//     in the history; see admission_decide.go), with porcupine as its
//     reference in tests and its fallback for what the sweep does not
//     cover.
//   - KeyModel, partitioned by idempotency key (ledger.Ledger.Submit under a key):
//     a submit under a key returns the job that holds it (a replay, with
//     its digest; ErrKeyConflict with another) while that job is retained,
//     and a new job only once the key is free, which the end of its holder
//     allows (eviction is unseen). Check derives the key history from the
//     SubmitKeyed operations the table-level stress records (a keyed
//     creation is an admission and creates its job for the other two
//     models; a replay is neither, but reads its job for JobModel), and
//     each terminal call on a keyed job that may have won (OK, or of
//     unknown outcome) (tablekeys.go); CheckKeys checks a key history of the
//     ledger's calls, hand-written or recorded by this package's own tests
//     on both stores. At the HTTP level, HTTPKeyModel checks the keyed
//     POSTs the stress records.
//   - TenantAdmissionModel (global) and TenantScopeModel (partitioned by
//     job), for a table-level history with tenants: the two-level bound,
//     each tenant's live jobs beside the depth, and calls scoped to a
//     tenant that see no other tenant's job (tenants.go).
//
// Walks of the listing (ledger.Ledger.List) fit no model partitioned by job
// or key: a page reads every retained job at once. CheckWalk is a validator
// beside the models instead (walk.go): a recorded walk lists no job twice,
// lists every job admitted before it and held after it, and lists newer
// jobs first, checked against the admissions and reads recorded around
// it. Its histories are hand-written and recorded by its own tests on both
// stores; the HTTP stress runs (the http, crash and replicas levels) record
// walks of GET /jobs beside their histories, and CheckRecordedWalks
// (walkrecorded.go) checks each against the history.
//
// # Usage
//
//	res, err := stress.Run(ctx, stress.DefaultConfig())
//	rep := linearizability.Check(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue})
//	if rep.Verdict != linearizability.Linearizable { ... rep.Visualization ... }
//
// # The HTTP level
//
// A history recorded through the HTTP API (httpstress.RunHTTP) is checked by
// CheckHTTP against HTTPJobModel and HTTPAdmissionModel. The runner's steps
// and eviction happen inside the server, unseen, so these models let them
// happen between observed operations, only along the state machine;
// docs/verification.md lists what this level can and cannot see. Keyed
// POSTs (SubmitKeyed, an Idempotency-Key) are checked against HTTPKeyModel
// too: a keyed 202 that names the job holding its key is a replay, each
// job keyed 202s name is created and admitted once (a derived KeyedAdmit),
// and where retention evicts nothing (the crash and replicas tests) a key
// once held stays held, so a key lost in a restart shows as a second job
// (httpkeys.go).
//
//	res, err := httpstress.RunHTTP(ctx, httpstress.DefaultHTTPConfig())
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue, KnowsTTL: true})
//
// # Histories on disk
//
// testdata/*.jsonl hold small hand-written histories that must pass
// (*-ok.jsonl) or must fail (*-bad.jsonl); http-*.jsonl are HTTP-level
// histories ("# level: http"). ReadHistory and WriteHistory read and write
// the format.
//
// Each model's Step is a list of named clauses, one rule each (clause.go,
// named as in docs/verification.md). No rule is vacuous: with any one
// removed, some must-fail history passes.
package linearizability
