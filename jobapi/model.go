package jobapi

import (
	"context"
	"encoding/json"
	"errors"
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

// unprocessable reports whether err asks for a 422 (see UnprocessableError).
func unprocessable(err error) bool {
	var u *UnprocessableError
	return errors.As(err, &u)
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req Request) (any, error)

// Run calls f.
func (f ModelFunc) Run(ctx context.Context, req Request) (any, error) { return f(ctx, req) }

// builtinModels maps the names Config.Model accepts to their constructors,
// which take what they need from the configuration.
var builtinModels = map[string]func(Config) Model{
	"fingerprint": func(c Config) Model { return Fingerprint{MaxPixels: c.MaxPixels} },
	"echo":        func(Config) Model { return Echo{} },
}

// NewModel returns the built-in model called name, configured as
// DefaultConfig configures it, or ErrUnknownModel.
func NewModel(name string) (Model, error) {
	cfg := DefaultConfig()
	cfg.Model = name
	return newModel(cfg)
}

// newModel returns the built-in model cfg.Model, configured by cfg, or
// ErrUnknownModel.
func newModel(cfg Config) (Model, error) {
	m, ok := builtinModels[cfg.Model]
	if !ok {
		return nil, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownModel, cfg.Model, modelNames())
	}
	return m(cfg), nil
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
