package jobapi

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jobledger/jobledger/model"
)

// The model's types are package model's; these names keep the handler's
// API in one place.
type (
	// Request is one parsed job request, as a model receives it.
	Request = model.Request
	// Model runs one request (see model.Model).
	Model = model.Model
	// RequestValidator is a Model that can refuse a request before it is
	// admitted (see model.RequestValidator).
	RequestValidator = model.RequestValidator
	// UnprocessableError is a RequestValidator's refusal answered 422.
	UnprocessableError = model.UnprocessableError
	// ModelFunc adapts a function to the Model interface.
	ModelFunc = model.Func
)

// unprocessable reports whether err asks for a 422 (see UnprocessableError).
func unprocessable(err error) bool {
	var u *UnprocessableError
	return errors.As(err, &u)
}

// builtinModels maps the names Config.Model accepts to their constructors,
// which take what they need from the configuration.
var builtinModels = map[string]func(Config) Model{
	"fingerprint": func(c Config) Model { return model.Fingerprint{MaxPixels: c.MaxPixels} },
	"echo":        func(Config) Model { return model.Echo{} },
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
