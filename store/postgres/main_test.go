package postgres_test

import (
	"context"
	"testing"

	"github.com/jobledger/jobledger/internal/pgtest"
)

var ctx = context.Background()

// TestMain: the tests run against the server of package pgtest (the one
// JOBLEDGER_PG_DSN names, which `make test` starts, or one it starts).
func TestMain(m *testing.M) { pgtest.Main(m) }

// newDatabase is an empty database for t alone.
func newDatabase(t testing.TB) string { return pgtest.NewDatabase(t) }
