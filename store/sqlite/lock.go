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

// fileLock is what a Store holds on its file from Open to Close: an
// exclusive flock(2) on the sidecar file REAL.lock and another on the
// database file REAL itself, REAL being the database's path with every
// symbolic link resolved. The one writer the design rests on must be the
// only writer of the file, across processes and within one.
//
// Why both: the sidecar guards the name (a file removed and created anew
// under it is still refused to a second store), the database file's own
// flock guards the file (removing the sidecar does not let a second store
// in). Neither is SQLite's own locking: its exclusive mode would also shut
// out this Store's reader connections, and in WAL mode its locks let any
// number of processes write in turn, each with its own idea of the depth.
//
// Why flock(2) on the database file and not an fcntl lock: SQLite locks
// byte ranges of the file with POSIX fcntl locks, and Linux keeps flock
// locks apart from fcntl locks, so the two never conflict or merge. An
// fcntl lock of ours would belong to the same process as SQLite's and
// merge with them, and an OFD lock conflicts with SQLite's on any byte
// range they share, which ties us to where SQLite locks. (Linux emulates
// flock with fcntl locks on NFS, where SQLite's WAL mode does not work
// anyway: the store is for a local file system.)
//
// The one hazard left: closing any descriptor of the file drops every
// fcntl lock this process holds on it, SQLite's among them. So a second
// Open in the process of a store that holds the file must not open the
// file at all: held, checked before the file is opened, refuses it. flock
// locks belong to the open file description, so another process's Open,
// which opens the file again, is refused by the lock itself. The lock file
// is left in place on Close: removing it would race with an Open that has
// just opened it.
//
// Why the resolved path: a store opened through a symbolic link to a file
// that another store holds must find that store's lock (SQLite follows the
// link to the same file). A hard link cannot be resolved to one name, so a
// file with more than one link is refused as locked: another store could
// hold it under its other name. (SQLite, too, keeps a log per name: a
// crash under one name leaves its commits where the other does not look.)
//
// The lock file also holds the commit mark (mark.go).
type fileLock struct {
	real string   // the database's path, links resolved
	side *os.File // REAL.lock, flocked
	db   *os.File // REAL, flocked; never closed while SQLite has it open
	id   fileID   // the identity of db
}

// fileID is a file's identity: its device and inode numbers.
type fileID struct{ dev, ino uint64 }

// lockMu makes the resolution of a path and the taking of its lock one step
// within the process, so that the file lockFile creates for a new database
// is closed before any store of this process can have opened it with
// SQLite. It guards held.
var lockMu sync.Mutex

// held is the set of the database files that a store of this process holds.
var held = map[fileID]bool{}

// lockFile takes the lock of the database file at path (absolute),
// creating the file, empty, if it does not exist. It fails with ErrLocked
// if another holder has either lock or the file has another link, and with
// ErrUnwritable if the file or the lock file cannot be created or opened.
func lockFile(path string) (*fileLock, error) {
	lockMu.Lock()
	defer lockMu.Unlock()
	real, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	lockPath := real + ".lock"
	side, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: lock file: %w", ErrUnwritable, err)
	}
	if err := flock(side, lockPath); err != nil {
		side.Close()
		return nil, err
	}
	l, err := lockDatabase(real)
	if err != nil {
		side.Close()
		return nil, err
	}
	l.side = side
	held[l.id] = true
	return l, nil
}

// lockDatabase takes the flock of the database file real, unless a store of
// this process holds it. lockMu must be held.
func lockDatabase(real string) (*fileLock, error) {
	info, err := os.Stat(real)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrUnwritable, err)
	case info.IsDir():
		return nil, fmt.Errorf("%w: %s is a directory", ErrUnwritable, real)
	case links(info) > 1:
		return nil, fmt.Errorf("%w: %s has %d hard links: a store could hold it under another name",
			ErrLocked, real, links(info))
	case held[identity(info)]:
		// Opening the file to try its flock, and closing it on refusal,
		// would drop the fcntl locks of the store that holds it.
		return nil, fmt.Errorf("%w: %s is held by another store of this process", ErrLocked, real)
	}
	db, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	if err := flock(db, real); err != nil {
		db.Close() // no store of this process holds it: no fcntl lock of ours to drop
		return nil, err
	}
	opened, err := db.Stat()
	if err == nil && identity(opened) != identity(info) {
		err = fmt.Errorf("%w: %s was replaced while it was being locked", ErrLocked, real)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &fileLock{real: real, db: db, id: identity(opened)}, nil
}

// flock takes an exclusive flock of f, named name, without waiting.
func flock(f *os.File, name string) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return fmt.Errorf("%w: %s is locked", ErrLocked, name)
	}
	return fmt.Errorf("%w: locking %s: %w", ErrUnwritable, name, err)
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

// identity is the device and inode of the file info describes.
func identity(info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

// unlock releases both locks; closing the files does. The store's
// connections must be closed first (see fileLock: closing db drops this
// process's fcntl locks on the file).
func (l *fileLock) unlock() error {
	lockMu.Lock()
	defer lockMu.Unlock()
	err := errors.Join(l.db.Close(), l.side.Close())
	delete(held, l.id)
	return err
}

// checkNamed returns an error wrapping ErrDetached unless path (the name
// the store was opened by) still names the file l holds and the log beside
// it is still there. SQLite writes on into a file or a log that was
// removed or renamed, where the next Open of path will not look.
func (l *fileLock) checkNamed(path string) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s was removed", ErrDetached, path)
	case err != nil:
		return fmt.Errorf("%w: %w", ErrDetached, err)
	case identity(info) != l.id:
		return fmt.Errorf("%w: %s now names another file", ErrDetached, path)
	}
	if _, err := os.Stat(l.real + walSuffix); err != nil {
		return fmt.Errorf("%w: its log: %w", ErrDetached, err)
	}
	return nil
}
