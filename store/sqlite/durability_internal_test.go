package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

// TestWriteConnectionDurability reads back, from the write connection of an
// open store, the settings that make a returned COMMIT durable (the package
// doc, "The writer and group commit"): WAL mode with synchronous=FULL, which fsyncs the WAL
// at every commit; NORMAL would fsync it at checkpoints only, OFF never.
// The readers are read-only.
func TestWriteConnectionDurability(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "jobs.db"), ledger.Config{MaxQueue: 1}, Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("payload")) // the writer has run a batch
	require.NoError(t, err)

	var sync, mode, fk, lockMode string
	require.NoError(t, s.wdb.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync))
	require.NoError(t, s.wdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, s.wdb.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
	require.NoError(t, s.wdb.QueryRowContext(ctx, "PRAGMA locking_mode").Scan(&lockMode))
	require.Equal(t, "2", sync, "synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA")
	require.Equal(t, "wal", mode)
	require.Equal(t, "1", fk, "foreign keys enforced")
	require.Equal(t, "normal", lockMode, "readers in other connections share the WAL index")

	var queryOnly string
	require.NoError(t, s.rdb.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly))
	require.Equal(t, "1", queryOnly, "the readers cannot write")
}
