// Package invariant lets this module's tests, stress runs and fuzz targets
// run the unexported invariant checkers of its types (a jobtable.Table, a
// jobapi.Server) without making them part of any public API.
package invariant

import (
	"errors"
	"sync"
)

// ErrNoChecker is returned by Check for a value that no checker knows, and
// by a checker for a value that is not of its type.
var ErrNoChecker = errors.New("invariant: no invariant checker for this value")

var (
	mu       sync.RWMutex
	checkers []func(v any) error
)

// Register adds a checker. Packages call it from init; the checker returns
// ErrNoChecker for a value that is not of its type.
func Register(c func(v any) error) {
	mu.Lock()
	defer mu.Unlock()
	checkers = append(checkers, c)
}

// Check runs the invariant checker of v (a *jobtable.Table of any type
// parameters, or a *jobapi.Server) and returns the violations it found,
// joined, or nil.
func Check(v any) error {
	mu.RLock()
	defer mu.RUnlock()
	for _, c := range checkers {
		if err := c(v); !errors.Is(err, ErrNoChecker) {
			return err
		}
	}
	return ErrNoChecker
}
