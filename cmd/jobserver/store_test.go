package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestEveryStoreKindOpens: the binary opens each form the config accepts,
// and no other.
func TestEveryStoreKindOpens(t *testing.T) {
	for name := range config.StoreKinds {
		require.Contains(t, openers, name, "a store form with no opener")
	}
	for name := range openers {
		require.Contains(t, config.StoreKinds, name, "an opener of no store form")
	}
}

// TestStoreRefusedAtStart: a -store the server cannot use stops it at
// start with a message that names the store and the reason, and never
// serves from a fresh database in its place.
func TestStoreRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	require.NoError(t, os.WriteFile(garbage, []byte("this is not a database, just text long enough to fill a header page"), 0o600))
	held := filepath.Join(dir, "held.db")
	st, err := sqlite.Open(context.Background(), held, ledger.Config{MaxQueue: 1}, sqlite.Options{})
	require.NoError(t, err)
	defer st.Close()

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name, store, want string
	}{
		{"no path", "sqlite:", `"sqlite:" names no file`},
		{"unwritable", "sqlite:" + filepath.Join(dir, "missing", "dir", "jobs.db"), "cannot write the database"},
		{"not a database", "sqlite:" + garbage, "database file is corrupt"},
		{"in use", "sqlite:" + held, "in use by another store"},
		{"no server", "postgres://postgres@127.0.0.1:1/jobs?connect_timeout=2", "cannot connect to the database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addrFile := filepath.Join(t.TempDir(), "addr")
			err := run([]string{"-listen", "127.0.0.1:0", "-store", tc.store, "-addr-file", addrFile}, log)
			require.ErrorContains(t, err, tc.want)
			_, statErr := os.Stat(addrFile)
			require.ErrorIs(t, statErr, os.ErrNotExist, "no address left for a server that never served")
			if strings.HasPrefix(tc.store, "sqlite:") && tc.name != "no path" {
				require.ErrorContains(t, err, tc.store[len("sqlite:"):], "the message names the file")
			}
		})
	}
	_, err = os.Stat(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created in its place")
	b, err := os.ReadFile(garbage)
	require.NoError(t, err)
	require.Contains(t, string(b), "this is not a database", "the file was left as it was")
}

// TestReplicaOptionsRefusedAtStart: a replica name or a lease that the
// PostgreSQL store refuses stops the server at start, naming it.
func TestReplicaOptionsRefusedAtStart(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a space in the name", []string{"-replica", "r 1"}, "Replica"},
		{"a lease too short", []string{"-lease", "1"}, "Lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(append([]string{"-listen", "127.0.0.1:0", "-store", dsn}, tc.args...), log)
			require.ErrorIs(t, err, jobapi.ErrInvalidConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
