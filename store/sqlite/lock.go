package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// fileLock is an exclusive flock(2) on the sidecar file REAL.lock, where
// REAL is the database's path with every symbolic link resolved, held for
// the life of a Store: the one writer the design rests on must be the only
// writer of the file, across processes and within one.
//
// Why a sidecar and not SQLite's own locking: SQLite's exclusive locking
// mode would also shut out this Store's own reader connections, and in WAL
// mode its locks let any number of processes write in turn, each with its
// own idea of the depth. flock locks belong to the open file description,
// so a second Open in the same process, which opens the file again, is
// refused as another process is. The lock file is left in place on Close:
// removing it would race with an Open that has just opened it.
//
// Why not a flock of the database file itself: closing any descriptor of
// the file drops the fcntl locks this process holds on it, SQLite's own
// among them, so a refused Open in the process of the store that holds the
// file would undo that store's locks; and where flock is emulated with
// fcntl locks (NFS), it would conflict with SQLite's.
//
// Why the resolved path: a store opened through a symbolic link to a file
// that another store holds must find that store's lock (SQLite follows the
// link to the same file). A hard link cannot be resolved to one name, so a
// file with more than one link is refused as locked: another store could
// hold it under its other name. (SQLite, too, keeps a log per name: a
// crash under one name leaves its commits where the other does not look.)
type fileLock struct {
	f *os.File
}

// lockMu makes the resolution of a path and the taking of its lock one step
// within the process, so that the file lockFile creates for a new database
// is closed before any store of this process can have opened it with SQLite.
var lockMu sync.Mutex

// lockFile takes the lock of the database file at path (absolute),
// creating the file, empty, if it does not exist. It fails with ErrLocked
// if another holder has the lock or the file has another link, and with
// ErrUnwritable if the file or the lock file cannot be created.
func lockFile(path string) (*fileLock, error) {
	lockMu.Lock()
	defer lockMu.Unlock()
	real, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	lockPath := real + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: lock file: %w", ErrUnwritable, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked", ErrLocked, lockPath)
		}
		return nil, fmt.Errorf("%w: locking %s: %w", ErrUnwritable, lockPath, err)
	}
	info, err := os.Stat(real)
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %w", ErrUnwritable, err)
	case info.IsDir():
		err = fmt.Errorf("%w: %s is a directory", ErrUnwritable, real)
	case links(info) > 1:
		err = fmt.Errorf("%w: %s has %d hard links: a store could hold it under another name",
			ErrLocked, real, links(info))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileLock{f: f}, nil
}

// resolve returns path with every symbolic link resolved, creating the file
// it names (through a dangling link, where SQLite would create it) if it
// does not exist yet. lockMu must be held.
func resolve(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return real, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(path)
}

// links is the number of hard links of the file info describes.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// unlock releases the lock; closing the file does.
func (l *fileLock) unlock() error { return l.f.Close() }
