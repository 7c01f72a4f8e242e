package jobapi

import "github.com/jobledger/jobledger/internal/invariant"

// The server's invariants are its ledger's: this module's tests, stress runs
// and fuzz targets check them through invariant.Check(server).
func init() {
	invariant.Register(func(v any) error {
		s, ok := v.(*Server)
		if !ok {
			return invariant.ErrNoChecker
		}
		return invariant.Check(s.table)
	})
}
