package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestConformance runs the contract's suite on the store, through
// ledger.WithCodecs as a server uses it, restarts included: Restart closes
// the store and opens its file again with the same Config.
func TestConformance(t *testing.T) {
	type opened struct {
		path string
		cfg  ledger.Config
	}
	var (
		mu    sync.Mutex
		files = map[ledger.Ledger[string, string]]opened{}
	)
	open := func(t *testing.T, path string, cfg ledger.Config) ledger.Ledger[string, string] {
		s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
		require.NoError(t, err)
		l := ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
		mu.Lock()
		files[l] = opened{path, cfg}
		mu.Unlock()
		return l
	}
	ledgertest.Run(t, ledgertest.Store{
		Open: func(t *testing.T, cfg ledger.Config) ledger.Ledger[string, string] {
			return open(t, filepath.Join(t.TempDir(), "jobs.db"), cfg)
		},
		Restart: func(t *testing.T, l ledger.Ledger[string, string]) ledger.Ledger[string, string] {
			mu.Lock()
			o := files[l]
			delete(files, l)
			mu.Unlock()
			require.NoError(t, l.Close())
			return open(t, o.path, o.cfg)
		},
	})
}
