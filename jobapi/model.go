package jobapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
// Config.Workers at a time, with a context that ends at the job's deadline,
// on cancellation and at the end of shutdown; Run should return soon after
// it ends, since the worker stays taken until Run returns.
//
// Run returns a value that encoding/json can marshal, which becomes the
// "result" member, or an error, which fails the job with its message. A
// panic in Run fails the job ("model panicked: ..."); the server goes on.
type Model interface {
	Run(ctx context.Context, req Request) (any, error)
}

// RequestValidator is implemented by a Model that can refuse a request
// before it is admitted; POST /jobs and POST /infer answer 400 with the
// error's message as the problem's detail. Keep the messages fixed strings:
// clients match on them.
type RequestValidator interface {
	ValidateRequest(req Request) error
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req Request) (any, error)

// Run calls f.
func (f ModelFunc) Run(ctx context.Context, req Request) (any, error) { return f(ctx, req) }

// builtinModels maps the names Config.Model accepts to their constructors.
var builtinModels = map[string]func() Model{
	"fingerprint": func() Model { return Fingerprint{} },
	"echo":        func() Model { return Echo{} },
}

// NewModel returns the built-in model called name, or ErrUnknownModel.
func NewModel(name string) (Model, error) {
	m, ok := builtinModels[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownModel, name, modelNames())
	}
	return m(), nil
}

// modelNames lists the built-in models, sorted, for messages.
func modelNames() string {
	names := make([]string, 0, len(builtinModels))
	for n := range builtinModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
