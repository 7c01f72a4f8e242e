package postgres_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestConformance runs the contract's suite on the store, through
// ledger.WithCodecs as a server uses it, restarts included: Restart closes
// the store and opens the same database again with the same Config. Each
// store gets a database of its own.
func TestConformance(t *testing.T) {
	t.Parallel()
	ledgertest.Run(t, reopenable(func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string] {
		s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{})
		require.NoError(t, err)
		return ledger.WithCodecs[string, string](s, ledger.String{}, ledger.String{})
	}))
}

// reopenable is the suite's Store for a ledger that open opens on a
// database: Open gives each store a database of its own, and Restart
// closes the store and opens its database again with the same Config.
func reopenable(open func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string]) ledgertest.Store {
	return reopenableOn(newDatabase, open)
}

// reopenableOn is reopenable with the databases newDB makes.
func reopenableOn(newDB func(t testing.TB) string, open func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string]) ledgertest.Store {
	type opened struct {
		dsn string
		cfg ledger.Config
	}
	var (
		mu  sync.Mutex
		dbs = map[ledger.Ledger[string, string]]opened{}
	)
	track := func(t *testing.T, dsn string, cfg ledger.Config) ledger.Ledger[string, string] {
		l := open(t, dsn, cfg)
		mu.Lock()
		dbs[l] = opened{dsn, cfg}
		mu.Unlock()
		return l
	}
	return ledgertest.Store{
		Open: func(t *testing.T, cfg ledger.Config) ledger.Ledger[string, string] {
			return track(t, newDB(t), cfg)
		},
		Restart: func(t *testing.T, l ledger.Ledger[string, string]) ledger.Ledger[string, string] {
			mu.Lock()
			o := dbs[l]
			delete(dbs, l)
			mu.Unlock()
			require.NoError(t, l.Close())
			return track(t, o.dsn, o.cfg)
		},
	}
}
