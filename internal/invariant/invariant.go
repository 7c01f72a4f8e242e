// Package invariant lets this module's tests, stress runs and fuzz targets
// run a jobtable.Table's unexported invariant checker without making it part
// of the table's public API.
package invariant

import (
	"errors"
	"sync/atomic"
)

// ErrNoChecker is returned by Check for a value that has no checker.
var ErrNoChecker = errors.New("invariant: no invariant checker for this value")

var check atomic.Pointer[func(table any) error]

// Register installs the checker. Package jobtable calls it from init; the
// checker returns ErrNoChecker for a value that is not a table.
func Register(c func(table any) error) { check.Store(&c) }

// Check runs the invariant checker of table, a *jobtable.Table of any type
// parameters, and returns the violations it found, joined, or nil.
func Check(table any) error {
	c := check.Load()
	if c == nil {
		return ErrNoChecker
	}
	return (*c)(table)
}
