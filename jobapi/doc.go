// Package jobapi is the HTTP job API of jobledger: an http.Handler that
// accepts jobs, runs them on a bounded worker pool shared by the synchronous
// and asynchronous paths, records them in the ledger it is given (package
// ledger), and serves their state, results and metrics.
//
// The split follows the ledger's design: this package owns execution
// (parsing, workers, deadlines, the model) and the wire; the store owns
// bookkeeping (admission, the state machine, retention, wait/notify). The
// program chooses and opens the store, and serves the handler with its own
// http.Server (cmd/jobserver does both).
//
// # Usage
//
//	cfg := jobapi.DefaultConfig()
//	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](cfg.LedgerConfig())
//	if err != nil { ... }
//	srv, err := jobapi.New(store, cfg, jobapi.Options{LedgerJobTTL: cfg.AsyncJobTTL})
//	if err != nil { ... }
//	httpSrv := &http.Server{Addr: addr, Handler: srv,
//		DisableGeneralOptionsHandler: true} // let srv answer OPTIONS *
//	go httpSrv.ListenAndServe()
//	...
//	srv.Shutdown(ctx)       // refuse new jobs, let running ones finish, end the rest
//	httpSrv.Shutdown(drain) // then stop serving reads
//	srv.Close()             // end the server's writes
//	store.Close()           // and close the store
//
// The Server checks no credentials: put package auth's middleware in front
// of it (auth.New(srv, keys)) for bearer tokens, as cmd/jobserver does
// with a token file. Behind it, a job belongs to the tenant of the token
// that submitted it, and a token sees only its tenant's jobs (an admin
// token every job; tenant.go).
//
// # Execution
//
// The Server is the HTTP layer; an executor of its own (executor.go) runs
// the jobs: the worker pool, deadlines, retries of the writes the store
// failed, shared-mode claiming and Shutdown's drain. Every end of a job is
// one write, end.go.
//
// Synchronous (POST /infer): take the body's share of a byte budget of
// Workers x MaxBodyBytes (503 before reading the body when it is spent),
// parse, wait for a worker, run the model, serialise. Asynchronous (POST /jobs): parse, Submit to the store, answer
// 202 at once, then a goroutine waits for a worker, takes the request,
// starts the job, runs the model and records Finish, Fail or Timeout. The
// replies that carry a stored result share a byte budget,
// MaxReplyBytesInFlight (503 when it is spent), held until written.
//
// Every job has a deadline of Config.AsyncTimeout from admission. When it
// passes, the job ends TIMEOUT whether it is pending or running, and a running
// model's context is cancelled. A model that returns an error ends FAILED
// with it; a model that panics ends FAILED ("model panicked: ...") and the
// server keeps serving. docs/http.md is the wire contract.
//
// At New, the jobs a durable store recovered (PENDING when an earlier
// process stopped) get runners, their deadlines still counted from their
// admission. A call the store fails, with an error that is none of the
// contract's answers, is answered 503 with Retry-After and logged.
//
// # Replicas
//
// A store shared by several servers (one with a ledger.Shared side, the
// PostgreSQL store) puts the server in shared mode (shared.go): admission
// starts no runner; one claimer per server claims the oldest claimable job
// of the store whenever a worker is free, so that any replica runs any
// replica's jobs; the admitting replica keeps each job's deadline with a
// timer; the end of a job anywhere cancels its model call where it runs.
// docs/scaling.md describes the deployment.
package jobapi
