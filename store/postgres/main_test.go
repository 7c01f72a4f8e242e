package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jobledger/jobledger/internal/pgtest"
)

var ctx = context.Background()

// TestMain: the tests run against the server of package pgtest (the one
// JOBLEDGER_PG_DSN names, which `make test` starts, or one it starts). A
// test binary started with peerEnv set is a peer process of a fault test
// instead, and runs no test (stoppedpeer_test.go).
func TestMain(m *testing.M) {
	if dsn := os.Getenv(peerEnv); dsn != "" {
		os.Exit(runPeer(dsn))
	}
	pgtest.Main(m)
}

// newDatabase is an empty database for t alone.
func newDatabase(t testing.TB) string { return pgtest.NewDatabase(t) }
