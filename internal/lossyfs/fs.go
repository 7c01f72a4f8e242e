package lossyfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// meta is the directory under disk that holds the files' durable copies
// while mounted, each named by the inode number of its scratch copy; the
// durable names in disk are hard links to them. Cut removes it.
const meta = ".lossyfs"

// ErrUnavailable is returned by Available and Mount where FUSE cannot be
// mounted: not root, or no /dev/fuse.
var ErrUnavailable = errors.New("lossyfs: FUSE cannot be mounted here")

// FS is one mount: disk's durable state served, with every write kept
// apart until it is synced, at a mount point.
type FS struct {
	disk, work, mnt string
	server          *fuse.Server

	// mu guards the fields below and every write under disk.
	mu    sync.Mutex
	files map[uint64]*file // by the scratch copy's inode number
	cut   bool             // after Cut, every write and sync fails
	gone  int              // files unlinked for good, to name their copies
}

// file is what a file has written since its last fsync.
type file struct {
	written spans
	shrunk  int64 // the smallest size a truncate set since then; -1 if none
}

// Available says whether Mount can work here: ErrUnavailable, with the
// reason, if not.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (mount(2) of type fuse)", ErrUnavailable)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Mount serves the directory disk at the directory mnt. disk is taken to
// hold only durable data: whatever is in it is there after any Cut. The
// caller must Unmount the FS on every path.
func Mount(disk, mnt string) (*FS, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	f := &FS{files: make(map[uint64]*file)}
	var err error
	if f.disk, err = filepath.Abs(disk); err != nil {
		return nil, err
	}
	if f.mnt, err = filepath.Abs(mnt); err != nil {
		return nil, err
	}
	if f.work, err = os.MkdirTemp("", "lossyfs-*"); err != nil {
		return nil, err
	}
	if err := f.load(); err != nil {
		f.discard()
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.work, &st); err != nil {
		f.discard()
		return nil, err
	}
	root := &gofs.LoopbackRoot{Path: f.work, Dev: uint64(st.Dev)}
	rn := &node{LoopbackNode: &gofs.LoopbackNode{RootData: root}, fsys: f}
	root.RootNode = rn
	f.server, err = gofs.Mount(f.mnt, rn, &gofs.Options{
		MountOptions: fuse.MountOptions{
			DirectMount: true, // as root, no fusermount needed
			FsName:      "lossyfs:" + f.disk,
			Name:        "lossyfs",
		},
	})
	if err != nil {
		f.discard()
		return nil, fmt.Errorf("lossyfs: mount %s: %w", f.mnt, err)
	}
	return f, nil
}

// Cut is the power cut: from its return on, nothing written through the
// mount becomes durable, and every write, truncate and sync fails with
// EIO. disk holds what was synced before it.
func (f *FS) Cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = true
}

// Unmount cuts the power (if Cut was not called), unmounts the FS and
// drops the scratch copy with every write that was not synced. The
// processes that used the mount must have closed their files: the
// unmount fails while one is open.
func (f *FS) Unmount() error {
	f.Cut()
	if err := f.server.Unmount(); err != nil {
		return fmt.Errorf("lossyfs: unmount %s: %w", f.mnt, err)
	}
	f.server.Wait()
	return f.discard()
}

// discard removes the scratch copy and the durable copies' directory.
func (f *FS) discard() error {
	return errors.Join(os.RemoveAll(f.work), os.RemoveAll(filepath.Join(f.disk, meta)))
}

// load copies disk into the scratch directory and links each file's
// durable copy under meta by the inode number of its scratch copy.
func (f *FS) load() error {
	if err := os.RemoveAll(filepath.Join(f.disk, meta)); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(f.disk, meta), 0o700); err != nil {
		return err
	}
	seen := map[uint64]string{} // disk's inode numbers: hard links
	return filepath.WalkDir(f.disk, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(f.disk, p)
		if err != nil || rel == "." {
			return err
		}
		if rel == meta {
			return filepath.SkipDir
		}
		live := filepath.Join(f.work, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(live, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, live)
		case d.Type().IsRegular():
			ino := info.Sys().(*syscall.Stat_t).Ino
			if first, ok := seen[ino]; ok {
				return os.Link(first, live)
			}
			seen[ino] = live
			if err := copyFile(p, live, info.Mode().Perm()); err != nil {
				return err
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(live, &st); err != nil {
				return err
			}
			return os.Link(p, f.copyOf(st.Ino))
		}
		return nil // devices, sockets and pipes are not kept
	})
}

// copyOf is the path of the durable copy of the file whose scratch copy
// has inode number ino.
func (f *FS) copyOf(ino uint64) string {
	return filepath.Join(f.disk, meta, strconv.FormatUint(ino, 10))
}

func copyFile(from, to string, perm fs.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, perm)
}
