// Package stress drives the job ledger with many concurrent clients: the
// core of the project's stress harness, behind the table's stress test, the
// conformance suite's stress rule and the linearizability gates, whose
// histories it records for package linearizability to check. It imports
// no server, client or store, so that the conformance suite does not.
//
// A Recorder collects one history from many clients. Every operation is
// stamped by one Clock, strictly increasing across goroutines, and an
// operation whose effect nobody saw (it never returned, or its transport
// failed) is kept pending forever, never dropped. The history is made of
// linearizability's Input and Output, so it goes to linearizability.Check
// (or CheckHTTP) and linearizability.WriteHistory as it is. A driver that
// calls something else than a Ledger records each call with Client.Begin
// and Client.End.
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
// The drivers that go through the HTTP API (the HTTP level, the crash and
// replicas tests) live in package httpstress, on this package's
// configuration, recorder and bookkeeping (Tally).
//
// docs/verification.md describes the drivers, their end-of-run checks and
// the gates that run them.
package stress
