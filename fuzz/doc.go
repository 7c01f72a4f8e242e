// Package fuzz holds the native Go fuzz targets of the ledger and its HTTP
// API. It has no code of its own outside its tests.
//
// # Targets
//
//   - FuzzSequential decodes the input into a sequence of ledger operations
//     on a fake clock, applies it to a jobtable.Table and to a plain
//     reference model, and compares every answer, the queue depth, the
//     counters and which jobs retention has evicted, running the table's
//     invariant checker after every step.
//   - FuzzConcurrent decodes the input into a schedule for a few
//     goroutines, each running a short list of operations, with waiters
//     taking part. The schedule releases each step through a channel, so
//     the input steers the interleaving. It then checks the table's
//     invariants, that every waiter returned once its job ended, and the
//     linearizability of the history recorded by package stress against the
//     porcupine models of package linearizability.
//   - FuzzTrace (build tag jobtable_trace) decodes the input into a few
//     threads of spec/JobTable.tla's roles (submitters, runners, timers,
//     pollers, waiters, misusers) and a schedule of the same kind,
//     releasing one API call at a time on a table whose trace log is on.
//     It checks the invariants, the depth back to zero once every job has
//     ended, and that every waiter returned; with -trace.dir it writes the
//     run's trace, which make trace-check checks against the spec.
//   - FuzzHTTP sends hostile method, path, query (the listing's state,
//     task_id, limit and cursor among them), Prefer and Idempotency-Key
//     fields and body bytes to the jobapi handler and checks status codes,
//     bodies (a GET /jobs page newest first) and the admission bound, that
//     a walk of GET /jobs lists exactly the jobs held, and the server's
//     invariants after the request and again once Shutdown has drained it
//     (no flight or deadline timer left behind).
//
// FuzzParseConfig, beside the config file's parser in
// cmd/jobserver/internal/config, feeds it arbitrary bytes; make fuzz runs
// it with these.
//
// # Usage
//
//	go test ./fuzz                                   # replay every seed
//	go test -tags jobtable_trace -run '^FuzzTrace$' ./fuzz -trace.dir DIR
//	go test -run '^$' -fuzz '^FuzzSequential$' -fuzztime 60s ./fuzz
//	make fuzz FUZZTIME=30s                           # every target in turn
//
// Each target's seeds are added with f.Add, one comment per seed saying
// what it covers; inputs the fuzzer found are committed under
// testdata/fuzz/<Target>/ and replay with the seeds. fuzz/mutants.sh runs
// the targets against the mutant builds of the ledger.
package fuzz
