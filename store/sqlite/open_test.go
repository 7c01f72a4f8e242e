package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// openErr opens e's file and returns the error, closing a store that
// opened after all.
func (e *env) openErr() error {
	e.t.Helper()
	s, err := sqlite.Open(ctx, e.path, e.cfg, e.opts)
	if err == nil {
		s.Close()
	}
	return err
}

// closedFile leaves e's file holding a few jobs, and no store open on it.
func closedFile(t *testing.T) *env {
	e := newEnv(t, ledger.Config{MaxQueue: 4})
	s := e.open()
	toState(t, s, ledgertype.Pending)
	toState(t, s, ledgertype.Done)
	checkInvariants(t, s)
	require.NoError(t, s.Close())
	return e
}

func TestOpenCreatesTheFile(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	require.NoFileExists(t, e.path)
	s := e.open()
	require.FileExists(t, e.path)
	require.Equal(t, e.path, s.Path())
	require.Equal(t, 5, sqlite.SchemaVersion)
}

// TestOpenLocked: a second store on the same file, in this process (as in
// another, flock locks the open file, not the process), is refused while
// the first is open, and opens once it is closed.
func TestOpenLocked(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	id := mustSubmit(t, s, "a")
	err := e.openErr()
	require.ErrorIs(t, err, sqlite.ErrLocked)
	require.ErrorContains(t, err, e.path)
	require.Equal(t, ledgertype.Pending, state(t, s, id), "the refused Open changed nothing")

	s = e.reopen(s)
	require.Equal(t, ledgertype.Pending, state(t, s, id))
}

// TestOpenLockedThroughLinks: a store opened through a symbolic link, or a
// hard link, to a file that another store holds is refused. (Regression:
// the lock file was named after the path as given, so a second store on
// the same file through a link took a lock of its own, finished the first
// one's jobs, and left a stored depth of -1 that no Open accepted again.)
// A file reached through a dangling link is created where the link points.
func TestOpenLockedThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.db")
	dangling := filepath.Join(dir, "dangling.db")
	require.NoError(t, os.Symlink(real, dangling))
	s, err := sqlite.Open(ctx, dangling, ledger.Config{MaxQueue: 1}, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.FileExists(t, real)
	id := mustSubmit(t, s, "a")

	// The symlinks first, while the file has one link: a second link would
	// refuse every name by itself, the lock's name unlooked at.
	symlink := filepath.Join(t.TempDir(), "link.db")
	require.NoError(t, os.Symlink(real, symlink))
	for _, path := range []string{real, symlink} {
		_, err := sqlite.Open(ctx, path, ledger.Config{MaxQueue: 1}, sqlite.Options{})
		require.ErrorIs(t, err, sqlite.ErrLocked, path)
	}
	hard := filepath.Join(dir, "hard.db")
	require.NoError(t, os.Link(real, hard))
	_, err = sqlite.Open(ctx, hard, ledger.Config{MaxQueue: 1}, sqlite.Options{})
	require.ErrorIs(t, err, sqlite.ErrLocked, hard)
	require.Equal(t, ledgertype.Pending, state(t, s, id), "the refused Opens changed nothing")
}

// TestOpenLockedAcrossProcesses: another process opening the file while
// this one holds it is refused too. The other process is this test binary,
// run again for TestOpenFromAnotherProcess alone.
func TestOpenLockedAcrossProcesses(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	s := e.open()
	require.Contains(t, openInAnotherProcess(t, e.path), "open: locked")
	require.NoError(t, s.Close())
	require.Contains(t, openInAnotherProcess(t, e.path), "open: ok", "and opens once this process let go")
}

// openInAnotherProcess runs TestOpenFromAnotherProcess on path in another
// process and returns what it printed.
func openInAnotherProcess(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenFromAnotherProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SQLITE_STORE_OTHER_PROCESS="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// TestOpenLockedWithoutLockFile: removing the lock file of a store that
// holds the file lets no second store in, from another process or this
// one: the lock holds on the database file itself. (Regression: with the
// lock file gone, a second server opened the file, failed the first one's
// running jobs as interrupted by restart, and left a stored depth that no
// Open accepted.)
func TestOpenLockedWithoutLockFile(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 2})
	s := e.open()
	id := toState(t, s, ledgertype.Running)
	require.NoError(t, os.Remove(e.path+".lock"))

	require.Contains(t, openInAnotherProcess(t, e.path), "open: locked")
	err := e.openErr()
	require.ErrorIs(t, err, sqlite.ErrLocked)
	require.ErrorContains(t, err, "held by another store of this process")
	require.Equal(t, ledgertype.Running, state(t, s, id), "the refused Opens changed nothing")
	require.NoError(t, errOf(s.Finish(ctx, id, []byte("r"))), "and the store holds its file as before")
	checkInvariants(t, s)

	require.NoError(t, s.Close())
	require.Contains(t, openInAnotherProcess(t, e.path), "open: ok", "and opens once this process let go")
}

// TestOpenFromAnotherProcess is the other process of
// TestOpenLockedAcrossProcesses; run alone, it does nothing.
func TestOpenFromAnotherProcess(t *testing.T) {
	path := os.Getenv("SQLITE_STORE_OTHER_PROCESS")
	if path == "" {
		t.Skip("the other process of TestOpenLockedAcrossProcesses")
	}
	s, err := sqlite.Open(ctx, path, ledger.Config{MaxQueue: 1}, sqlite.Options{})
	switch {
	case errors.Is(err, sqlite.ErrLocked):
		fmt.Println("open: locked")
	case err != nil:
		t.Fatal(err)
	default:
		fmt.Println("open: ok")
		require.NoError(t, s.Close())
	}
}

func TestOpenNewerSchema(t *testing.T) {
	e := closedFile(t)
	e.exec(`UPDATE meta SET value = 99 WHERE key = 'schema_version'`)
	err := e.openErr()
	require.ErrorIs(t, err, sqlite.ErrNewerSchema)
	require.ErrorContains(t, err, "99")
}

func TestOpenGarbageFile(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	garbage := make([]byte, 8192)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	require.NoError(t, os.WriteFile(e.path, garbage, 0o644))
	require.ErrorIs(t, e.openErr(), sqlite.ErrCorrupt)
	got, err := os.ReadFile(e.path)
	require.NoError(t, err)
	require.Equal(t, garbage, got, "the file is left as it was")
}

// TestOpenDamagedFile: a database whose pages were overwritten fails
// PRAGMA quick_check or its first read.
func TestOpenDamagedFile(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 64, JobTTL: -1, MaxCompleted: -1})
	s := e.open()
	for range 40 {
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, make([]byte, 500))
		require.NoError(t, err)
		require.NoError(t, errOf(s.Finish(ctx, id, make([]byte, 500))))
	}
	require.NoError(t, s.Close()) // checkpoints the log into the file
	f, err := os.OpenFile(e.path, os.O_RDWR, 0)
	require.NoError(t, err)
	info, err := f.Stat()
	require.NoError(t, err)
	require.Greater(t, info.Size(), int64(4*4096))
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = 0xA5
	}
	_, err = f.WriteAt(junk, 2*4096) // page 3
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.ErrorIs(t, e.openErr(), sqlite.ErrCorrupt)
}

func TestOpenForeignDatabase(t *testing.T) {
	e := newEnv(t, ledger.Config{MaxQueue: 1})
	e.exec(`CREATE TABLE customers (name TEXT)`)
	require.ErrorIs(t, e.openErr(), sqlite.ErrForeign)
}

func TestOpenUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := map[string]string{
		"missing directory": filepath.Join(dir, "no", "such", "jobs.db"),
		"parent is a file":  filepath.Join(file, "jobs.db"),
		"path is a dir":     dir,
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		cases["read-only directory"] = filepath.Join(ro, "jobs.db")
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := sqlite.Open(ctx, path, ledger.Config{MaxQueue: 1}, sqlite.Options{})
			require.ErrorIs(t, err, sqlite.ErrUnwritable)
		})
	}
}

// TestOpenDepthMismatch: a stored depth that is not the number of live
// jobs means the file was changed behind the store's back.
func TestOpenDepthMismatch(t *testing.T) {
	e := closedFile(t)
	e.exec(`UPDATE meta SET value = 3 WHERE key = 'depth'`)
	err := e.openErr()
	require.ErrorIs(t, err, sqlite.ErrDepthMismatch)
	require.ErrorContains(t, err, "stored depth 3, 1 jobs not terminal")
}

// TestOpenClockPanicReleases: a panic of the injected clock while Open
// recovers the file goes on to the caller, and leaves nothing open: the
// next Open succeeds. (Regression: the panic left the lock and the write
// connection held, and every later Open of the file failed with ErrLocked.)
func TestOpenClockPanicReleases(t *testing.T) {
	e := closedFile(t)
	cfg := e.cfg
	cfg.Now = func() time.Time { panic("clock broke") }
	require.PanicsWithValue(t, "clock broke", func() {
		sqlite.Open(ctx, e.path, cfg, e.opts)
	})
	s := e.open()
	require.Equal(t, 2, s.Stats().Jobs, "the panic changed nothing")
}
