package model

import (
	"context"
	"encoding/json"
)

// Request is one parsed job request, as a model receives it.
type Request struct {
	// TaskID is the caller's own id for the request, echoed in every
	// answer; empty when the caller gave none.
	TaskID string
	// Image is the decoded "image" field; nil when the body had none.
	Image []byte
	// Params is the "params" object as raw JSON; nil when the body had
	// none.
	Params json.RawMessage
}

// Model runs one request. The server calls Run on a worker, at most
// its Config.Workers at a time, with a context that ends at the job's
// deadline, on cancellation and at the end of shutdown; Run should return
// soon after it ends, since the worker stays taken until Run returns.
//
// Run returns a value that encoding/json can marshal, which becomes the
// "result" member, or an error, which fails the job with its message. A
// panic in Run fails the job ("model panicked: ..."); the server goes on.
type Model interface {
	Run(ctx context.Context, req Request) (any, error)
}

// RequestValidator is implemented by a Model that can refuse a request
// before it is admitted; POST /jobs and POST /infer answer 400 with the
// error's message as the problem's detail, or 422 when the error is (or
// wraps) an *UnprocessableError. Keep the messages fixed strings: clients
// match on them.
type RequestValidator interface {
	ValidateRequest(req Request) error
}

// UnprocessableError is a RequestValidator's refusal of a request that is
// well formed but that the model will not process, such as an image over
// the fingerprint model's max_pixels: POST /jobs and POST /infer answer it
// 422 rather than 400, with Detail as the problem's detail.
type UnprocessableError struct {
	Detail string
}

func (e *UnprocessableError) Error() string { return e.Detail }

// Func adapts a function to the Model interface.
type Func func(ctx context.Context, req Request) (any, error)

// Run calls f.
func (f Func) Run(ctx context.Context, req Request) (any, error) { return f(ctx, req) }
