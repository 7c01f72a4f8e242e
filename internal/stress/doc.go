// Package stress drives the job ledger with many concurrent clients: the
// one stress harness of the project, behind the table's stress test, the
// conformance suite's stress rule and the linearizability gates, whose
// histories it records for package linearizability to check.
//
// A Recorder collects one history from many clients. Every operation is
// stamped by one Clock, strictly increasing across goroutines, and an
// operation whose effect nobody saw (it never returned, or its transport
// failed) is kept pending forever, never dropped. The history is made of
// linearizability's Input and Output, so it goes to linearizability.Check
// (or CheckHTTP) and linearizability.WriteHistory as it is.
//
// # Usage
//
//	res, err := stress.Run(ctx, stress.DefaultConfig())
//	rep := linearizability.Check(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue})
//	if len(res.Violations) > 0 || rep.Verdict != linearizability.Linearizable { ... }
//
// Drive drives one ledger (a Ledger: TableLedger for a table, StoreLedger
// for any store of the contract) with submitters, runners, pollers and
// waiters, each checking what it sees as it goes (a snapshot no ledger can
// hold, a job going back, a call refused that must succeed or the
// reverse, a Wait that returns a live job), and checks the stress
// invariants at the end (no call panicked, ids unique, each accepted job
// ended exactly once, no waiter left blocked). Run is Drive on a fresh
// table, which then checks the depth and the table's own invariants.
// LedgerConfig is the shape the table's stress test and the conformance
// suite run, unrecorded; DefaultConfig is lincheck's. One submit in
// Config.KeyedEvery is keyed, recorded with whether the ledger replayed,
// for Check's key model. A test wraps the ledger (Config.Wrap) to inject
// a fault.
//
// # The HTTP level
//
// RunHTTP starts a server (jobapi, echo model) on 127.0.0.1 and records what
// real HTTP clients see through its API (Recorder.HTTPClient, which sends
// each request through package client); linearizability.CheckHTTP checks
// that history. One submit in Config.KeyedEvery sends an
// Idempotency-Key, under a small set of keys that the run's keyed submits
// take in turn (keyed.go, shared with the table level), so that replays,
// several submits on one fresh key at once, and 422s for another body
// happen; the crash and replicas tests send them too, across their
// restarts and replicas.
//
//	res, err := stress.RunHTTP(ctx, stress.DefaultHTTPConfig())
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: res.Config.MaxQueue, KnowsTTL: true})
//
// # The crash test
//
// RunCrash starts a jobserver binary on a durable store, puts the HTTP
// level's clients on it, kills it with SIGKILL at random moments and starts
// it again on the same store, then drains a last life. After each restart
// it reads every acknowledged job (none may be gone, none seen ended may
// have changed); the history, restarts and all, is for CheckHTTP with
// CheckConfig.Retained set, since its retention evicts nothing.
//
//	res, err := stress.RunCrash(ctx, cfg) // cfg from DefaultCrashConfig, with Server, Store, Dir
//	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{MaxQueue: cfg.MaxQueue, Retained: true, KnowsTTL: true})
//
// # Replicas
//
// RunReplicas starts several jobserver replicas on one shared store (a
// PostgreSQL database), puts the HTTP level's clients on each (their reads
// pick jobs any replica admitted), kills one with SIGKILL mid-run and
// starts it again under its name, reads every acknowledged job through it,
// then drains through all of them. Its history too is for CheckHTTP with
// CheckConfig.Retained set.
//
//	res, err := stress.RunReplicas(ctx, cfg) // cfg from DefaultReplicasConfig, with Server, Store, Dir
//
// docs/verification.md describes the drivers, their end-of-run checks and
// the gates that run them.
package stress
