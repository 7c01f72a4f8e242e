package lossyfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

func (f *FS) isCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut
}

// fileLocked is the state of the file with inode number ino.
// f.mu must be held.
func (f *FS) fileLocked(ino uint64) *file {
	fl := f.files[ino]
	if fl == nil {
		fl = &file{shrunk: -1}
		f.files[ino] = fl
	}
	return fl
}

// written notes that [off, end) of file ino was written.
func (f *FS) written(ino uint64, off, end int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.fileLocked(ino)
	fl.written = fl.written.add(off, end)
}

// truncated notes that file ino's size was set to size.
func (f *FS) truncated(ino uint64, size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl := f.fileLocked(ino)
	if fl.shrunk < 0 || size < fl.shrunk {
		fl.shrunk = size
	}
}

// forget detaches file ino, whose last name is gone, from its durable
// copy, so that a new file given the same inode number starts afresh; the
// durable names that still point at the copy keep it.
func (f *FS) forget(ino uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, ino)
	f.gone++
	// A file never synced has no durable copy: nothing to rename.
	_ = os.Rename(f.copyOf(ino), filepath.Join(f.disk, meta, "gone-"+strconv.Itoa(f.gone)))
}

// syncFile makes the writes of file ino durable: its size, and the
// ranges written since its last sync, read from fd, its scratch copy.
func (f *FS) syncFile(ino uint64, fd int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return syscall.EIO
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	dst, err := os.OpenFile(f.copyOf(ino), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer dst.Close()
	fl := f.fileLocked(ino)
	if fl.shrunk >= 0 && fl.shrunk < st.Size {
		if err := dst.Truncate(fl.shrunk); err != nil {
			return err
		}
	}
	if err := dst.Truncate(st.Size); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for _, s := range fl.written {
		for off := s.off; off < min(s.end, st.Size); {
			n, err := syscall.Pread(fd, buf[:min(int64(len(buf)), min(s.end, st.Size)-off)], off)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if _, err := dst.WriteAt(buf[:n], off); err != nil {
				return err
			}
			off += int64(n)
		}
	}
	fl.written, fl.shrunk = nil, -1
	return nil
}

// syncDir makes the entries of directory rel (relative to the root) as
// they are now durable.
func (f *FS) syncDir(rel string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return syscall.EIO
	}
	live, durable := filepath.Join(f.work, rel), filepath.Join(f.disk, rel)
	if err := os.MkdirAll(durable, 0o755); err != nil {
		return err
	}
	now, err := os.ReadDir(live)
	if err != nil {
		return err
	}
	was, err := os.ReadDir(durable)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, e := range now {
		keep[e.Name()] = true
	}
	for _, e := range was {
		if !keep[e.Name()] && !(rel == "" && e.Name() == meta) {
			if err := os.RemoveAll(filepath.Join(durable, e.Name())); err != nil {
				return err
			}
		}
	}
	for _, e := range now {
		if err := f.syncEntryLocked(filepath.Join(live, e.Name()), filepath.Join(durable, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// syncEntryLocked makes the durable entry at path durable what the live
// entry at path live is. f.mu must be held.
func (f *FS) syncEntryLocked(live, durable string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(live, &st); err != nil {
		return err
	}
	old, oldErr := os.Lstat(durable)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		if oldErr == nil && old.IsDir() {
			return nil
		}
		if err := os.RemoveAll(durable); err != nil {
			return err
		}
		return os.Mkdir(durable, fs.FileMode(st.Mode&0o7777))
	case syscall.S_IFLNK:
		target, err := os.Readlink(live)
		if err != nil {
			return err
		}
		if err := os.RemoveAll(durable); err != nil {
			return err
		}
		return os.Symlink(target, durable)
	case syscall.S_IFREG:
		copyPath := f.copyOf(st.Ino)
		c, err := os.Lstat(copyPath)
		if errors.Is(err, fs.ErrNotExist) {
			// Never synced: the name is durable, the data is not.
			if err := os.WriteFile(copyPath, nil, fs.FileMode(st.Mode&0o777)); err != nil {
				return err
			}
			c, err = os.Lstat(copyPath)
		}
		if err != nil {
			return err
		}
		if oldErr == nil && os.SameFile(old, c) {
			return nil
		}
		tmp := durable + ".lossyfs-new"
		if err := os.Link(copyPath, tmp); err != nil {
			return err
		}
		if oldErr == nil && old.IsDir() {
			if err := os.RemoveAll(durable); err != nil {
				return err
			}
		}
		return os.Rename(tmp, durable)
	}
	return nil // devices, sockets and pipes are not kept
}
