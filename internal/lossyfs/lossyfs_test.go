package lossyfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/lossyfs"
)

// disk is a mounted FS on a fresh durable directory.
type disk struct {
	t        *testing.T
	dir, mnt string
	fs       *lossyfs.FS
}

// mount mounts a fresh FS for t and unmounts it when t ends. Without root
// it skips, saying so, except under CI=true, where it fails.
func mount(t *testing.T) *disk {
	t.Helper()
	if err := lossyfs.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("SKIPPED (not run): %v", err)
	}
	root := t.TempDir()
	d := &disk{t: t, dir: filepath.Join(root, "disk"), mnt: filepath.Join(root, "mnt")}
	require.NoError(t, os.Mkdir(d.dir, 0o755))
	require.NoError(t, os.Mkdir(d.mnt, 0o755))
	d.mountAgain()
	t.Cleanup(func() {
		if d.fs != nil {
			require.NoError(t, d.fs.Unmount())
		}
	})
	return d
}

func (d *disk) mountAgain() {
	f, err := lossyfs.Mount(d.dir, d.mnt)
	require.NoError(d.t, err)
	d.fs = f
}

// cut cuts the power and mounts the durable state again.
func (d *disk) cut() {
	d.fs.Cut()
	f := d.fs
	d.fs = nil
	require.NoError(d.t, f.Unmount())
	d.mountAgain()
}

func (d *disk) path(name string) string { return filepath.Join(d.mnt, name) }

// write writes data to name at off, creating it, and fsyncs it if sync.
func (d *disk) write(name string, off int64, data string, sync bool) {
	f, err := os.OpenFile(d.path(name), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(d.t, err)
	defer f.Close() // on a failure too: an open file keeps the mount busy
	_, err = f.WriteAt([]byte(data), off)
	require.NoError(d.t, err)
	if sync {
		require.NoError(d.t, f.Sync())
	}
	require.NoError(d.t, f.Close())
}

// syncDir fsyncs the mount's root directory.
func (d *disk) syncDir() {
	f, err := os.Open(d.mnt)
	require.NoError(d.t, err)
	defer f.Close()
	require.NoError(d.t, f.Sync())
	require.NoError(d.t, f.Close())
}

// content is name's content, or "(none)" if it does not exist.
func (d *disk) content(name string) string {
	b, err := os.ReadFile(d.path(name))
	if os.IsNotExist(err) {
		return "(none)"
	}
	require.NoError(d.t, err)
	return string(b)
}

func TestWriteWithoutSyncIsLost(t *testing.T) {
	d := mount(t)
	d.write("f", 0, "synced", true)
	d.syncDir()
	d.write("f", 0, "SYN", false)
	d.write("f", 6, " and more", false)
	require.Equal(t, "SYNced and more", d.content("f"), "the writer sees its own writes")
	d.cut()
	require.Equal(t, "synced", d.content("f"))
}

func TestSyncedDataSurvives(t *testing.T) {
	d := mount(t)
	d.write("f", 0, "one", true)
	d.syncDir()
	d.write("f", 3, " two", false)
	d.write("f", 0, "ONE", true) // syncs both writes
	d.cut()
	require.Equal(t, "ONE two", d.content("f"))
	d.write("f", 0, "x", true)
	d.cut()
	require.Equal(t, "xNE two", d.content("f"), "a second life's sync")
}

func TestTruncateIsDurableOnlyWhenSynced(t *testing.T) {
	d := mount(t)
	d.write("f", 0, "0123456789", true)
	d.syncDir()
	require.NoError(t, os.Truncate(d.path("f"), 2))
	d.cut()
	require.Equal(t, "0123456789", d.content("f"))

	require.NoError(t, os.Truncate(d.path("f"), 2))
	d.write("f", 4, "ab", true) // a hole at 2..4 where the old data was
	d.cut()
	require.Equal(t, "01\x00\x00ab", d.content("f"))
}

func TestNewFileNeedsItsDirectorySynced(t *testing.T) {
	d := mount(t)
	d.write("f", 0, "data", true)
	d.cut()
	require.Equal(t, "(none)", d.content("f"), "file synced, directory not")

	d.write("f", 0, "data", false)
	d.syncDir()
	d.cut()
	require.Equal(t, "", d.content("f"), "name synced, data not")

	d.write("f", 0, "data", true)
	d.cut()
	require.Equal(t, "data", d.content("f"), "both synced")
}

func TestRenameIsDurableWhenItsDirectoryIsSynced(t *testing.T) {
	d := mount(t)
	d.write("a", 0, "A", true)
	d.write("b", 0, "B", true)
	d.syncDir()
	require.NoError(t, os.Rename(d.path("a"), d.path("b")))
	require.Equal(t, "A", d.content("b"))
	d.cut()
	require.Equal(t, "A", d.content("a"), "the rename was not synced")
	require.Equal(t, "B", d.content("b"))

	require.NoError(t, os.Rename(d.path("a"), d.path("b")))
	d.syncDir()
	d.cut()
	require.Equal(t, "(none)", d.content("a"))
	require.Equal(t, "A", d.content("b"))
}

func TestUnlinkIsUndoneUnlessSynced(t *testing.T) {
	d := mount(t)
	d.write("f", 0, "kept", true)
	d.syncDir()
	require.NoError(t, os.Remove(d.path("f")))
	d.write("f", 0, "new file, same name", true) // may reuse the inode number
	d.cut()
	require.Equal(t, "kept", d.content("f"))

	require.NoError(t, os.Remove(d.path("f")))
	d.syncDir()
	d.cut()
	require.Equal(t, "(none)", d.content("f"))
}

func TestWritesFailAfterCut(t *testing.T) {
	d := mount(t)
	f, err := os.OpenFile(d.path("f"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	d.fs.Cut()
	_, err = f.WriteAt([]byte("late"), 0)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, f.Sync(), syscall.EIO)
	require.NoError(t, f.Close())
}
