package linearizability_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// recordedStores opens, for the tests that record histories on real stores,
// the memory store and the SQLite store with cfg.
func recordedStores(cfg ledger.Config) map[string]func(t *testing.T) ledger.Ledger[string, string] {
	return map[string]func(t *testing.T) ledger.Ledger[string, string]{
		"memory": func(t *testing.T) ledger.Ledger[string, string] {
			l, err := ledger.NewMemory[string, string](cfg)
			require.NoError(t, err)
			return l
		},
		"sqlite": func(t *testing.T) ledger.Ledger[string, string] {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "jobs.db"), cfg, sqlite.Options{})
			require.NoError(t, err)
			return ledger.WithCodecs(st, ledger.String{}, ledger.String{})
		},
	}
}

// requireInvariants fails t unless l, a store of recordedStores, finds its
// own invariants kept.
func requireInvariants(t *testing.T, l ledger.Ledger[string, string]) {
	t.Helper()
	c, ok := ledger.As[ledger.Checker](l)
	require.True(t, ok, "the store checks its invariants")
	require.NoError(t, c.CheckInvariants())
}
