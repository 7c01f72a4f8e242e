package client

import "github.com/jobledger/jobledger/wire"

// The bodies of the wire contract are package wire's; these names keep
// them where a user of the client looks for them.

// State is a job's state as the API names it.
type State = wire.State

// The states of a job.
const (
	Pending  = wire.Pending
	Running  = wire.Running
	Done     = wire.Done
	Failed   = wire.Failed
	TimedOut = wire.TimedOut
)

// Request is the body of POST /jobs and POST /infer.
type Request = wire.Request

// Accepted answers POST /jobs.
type Accepted = wire.Accepted

// Snapshot is a job, as GET /jobs/{id}, its wait and its cancel return it.
type Snapshot = wire.Snapshot

// Result answers GET /jobs/{id}/result.
type Result = wire.Result

// InferResult answers POST /infer.
type InferResult = wire.InferResult

// Page is one page of GET /jobs.
type Page = wire.Page
