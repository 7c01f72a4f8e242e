package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestWritesRefusedOnceFileGone: once the store's path no longer names the
// file it holds, or the log beside it is gone, every write is refused with
// ErrDetached, the first one included: nothing is acknowledged that the
// next Open of the path would not find. (Regression: after the file was
// removed, the store went on acknowledging jobs into the removed file, and
// a restart started empty without a word.)
func TestWritesRefusedOnceFileGone(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"file removed": func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) },
		"file replaced": func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other.db")
			require.NoError(t, os.WriteFile(other, nil, 0o644))
			require.NoError(t, os.Rename(other, path))
		},
		"log removed": func(t *testing.T, path string) { require.NoError(t, os.Remove(path+"-wal")) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.db")
			s, err := sqlite.Open(ctx, path, ledger.Config{MaxQueue: 8}, sqlite.Options{})
			require.NoError(t, err)
			defer s.Close()
			running := toState(t, s, ledgertype.Running)
			damage(t, path)

			_, _, err = s.Submit(ctx, ledger.Submission{TaskID: "after"}, []byte("req"))
			require.ErrorIs(t, err, sqlite.ErrDetached)
			require.ErrorContains(t, err, path)
			_, err = s.Finish(ctx, running, []byte("res"))
			require.ErrorIs(t, err, sqlite.ErrDetached, "and every later write")
			require.Equal(t, 1, s.Stats().Depth, "nothing acknowledged")
			require.Equal(t, ledgertype.Running, state(t, s, running), "reads go on from the file the store holds")
		})
	}
}
