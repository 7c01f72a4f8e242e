package sqlite_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// crashedFile runs jobs whole lifecycles on a store and returns an
// environment on a copy of its files as a crash of its process leaves
// them: the database, its log (never checkpointed) and its lock file,
// copied while the store is open and idle.
func crashedFile(t *testing.T, jobs int) *env {
	t.Helper()
	e := newEnv(t, ledger.Config{MaxQueue: jobs})
	s := e.open()
	for range jobs {
		toState(t, s, ledgertype.Done)
	}
	crashed := *e
	crashed.path = filepath.Join(t.TempDir(), "jobs.db")
	for _, suffix := range []string{"", "-wal", ".lock"} {
		copyFile(t, e.path+suffix, crashed.path+suffix)
	}
	return &crashed
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.Create(to)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// damage is what was done to a crashed file behind the store's back, which
// lost acknowledged commits, and what Open's refusal says of it.
type damage struct {
	do   func(t *testing.T, path string)
	want string
}

// The refusals' words: the count below the mark, or the log that an empty
// file would have had discarded (and Open leaves in place).
const (
	belowMark = "acknowledged commits are missing"
	emptyFile = "is empty but its log"
)

var damages = map[string]damage{
	"log removed": {func(t *testing.T, path string) { require.NoError(t, os.Remove(path+"-wal")) }, belowMark},
	"database truncated, log intact": {func(t *testing.T, path string) {
		require.NoError(t, os.Truncate(path, 0))
	}, emptyFile},
	"log cut in half": {func(t *testing.T, path string) {
		info, err := os.Stat(path + "-wal")
		require.NoError(t, err)
		require.NoError(t, os.Truncate(path+"-wal", info.Size()/2))
	}, belowMark},
	"database removed, log left": {func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }, emptyFile},
}

// TestOpenRefusesMissingCommits: a file that lost commits it acknowledged
// is refused with ErrMissingCommits, at every Open, and starts, with the
// jobs it still holds, once Repair has accepted it. (Regression: with its
// log removed, the database truncated beside its log, or its log cut
// short, the store started with 0 or 15 of its 30 jobs, and no warning.)
func TestOpenRefusesMissingCommits(t *testing.T) {
	const jobs = 30
	t.Run("undamaged", func(t *testing.T) {
		e := crashedFile(t, jobs)
		require.Equal(t, jobs, e.open().Stats().Jobs)
	})
	for name, d := range damages {
		t.Run(name, func(t *testing.T) {
			e := crashedFile(t, jobs)
			d.do(t, e.path)
			for range 2 {
				err := e.openErr()
				require.ErrorIs(t, err, sqlite.ErrMissingCommits)
				require.ErrorContains(t, err, e.path)
				require.ErrorContains(t, err, d.want)
			}

			r, err := sqlite.Repair(ctx, e.path)
			require.NoError(t, err)
			require.True(t, r.Changed(), "%s", r)
			t.Logf("repair:\n%s", r)
			require.Less(t, e.open().Stats().Jobs, jobs, "repaired, it holds what is left")
		})
	}
}

// TestRepairDepth: Repair stores the depth the jobs give in a file whose
// stored depth Open refuses, says so, and leaves a file Open accepts; run
// again, it finds nothing to repair.
func TestRepairDepth(t *testing.T) {
	e := closedFile(t)
	e.exec(`UPDATE meta SET value = 3 WHERE key = 'depth'`)
	require.ErrorIs(t, e.openErr(), sqlite.ErrDepthMismatch)

	r, err := sqlite.Repair(ctx, e.path)
	require.NoError(t, err)
	require.Equal(t, 3, r.Depth)
	require.Equal(t, 1, r.Live)
	require.Contains(t, r.String(), "depth: stored 3, 1 jobs not terminal: stored 1")
	s := e.open()
	require.Equal(t, 1, s.Stats().Depth)
	require.NoError(t, s.Close())

	r, err = sqlite.Repair(ctx, e.path)
	require.NoError(t, err)
	require.False(t, r.Changed())
	require.Contains(t, r.String(), "nothing to repair")
}

// TestRepairRefusedWhileHeld: Repair takes the store's lock, so it refuses
// a file that a store holds, changing nothing.
func TestRepairRefusedWhileHeld(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	_, err := sqlite.Repair(ctx, e.path)
	require.ErrorIs(t, err, sqlite.ErrLocked)
	require.NoError(t, s.Close())
	_, err = sqlite.Repair(ctx, e.path)
	require.NoError(t, err)
}
