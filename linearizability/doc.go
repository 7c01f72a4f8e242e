// Package linearizability records concurrent histories of a job ledger and
// checks them with porcupine against two sequential models.
//
// A history is a list of porcupine operations, each with a call and a return
// time taken from one monotonic Clock, the client that issued it, its Input
// and its Output. Two models judge it:
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
//
// # Usage
//
//	res, err := linearizability.RunStress(ctx, linearizability.DefaultStressConfig())
//	rep := linearizability.Check(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue})
//	if rep.Verdict != linearizability.Linearizable { ... rep.Visualization ... }
//
// The recorder is written against the Ledger interface: see TableLedger
// for the in-process adapter.
//
// # The HTTP level
//
// RunHTTPStress starts a server (jobapi, echo model) on 127.0.0.1 and
// records what real HTTP clients see through its API (Recorder.HTTPClient,
// which sends each request through package client); CheckHTTP checks that
// history against HTTPJobModel and HTTPAdmissionModel. The runner's steps
// and eviction happen inside the server, unseen, so these models let them
// happen between observed operations, only along the state machine;
// docs/verification.md lists what this level can and cannot see.
//
//	res, err := linearizability.RunHTTPStress(ctx, linearizability.DefaultHTTPStressConfig())
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue})
//
// # Histories on disk
//
// testdata/*.jsonl hold small hand-written histories that must pass
// (*-ok.jsonl) or must fail (*-bad.jsonl); http-*.jsonl are HTTP-level
// histories ("# level: http"). ReadHistory and WriteHistory read and write
// the format.
//
// Each model's Step is a list of named clauses, one rule each (clause.go,
// named as in docs/verification.md). TestModelClausesPinned removes them
// one at a time: for each, some must-fail history must then pass, so that
// no rule of a model is vacuous.
package linearizability
