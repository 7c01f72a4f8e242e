package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileLock is an exclusive flock(2) on the sidecar file PATH.lock, held for
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
type fileLock struct {
	f *os.File
}

// lockFile takes the lock on path, creating the file if needed. It fails
// with ErrLocked if another holder has it, and with ErrUnwritable if the
// file cannot be created.
func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: lock file: %w", ErrUnwritable, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked", ErrLocked, path)
		}
		return nil, fmt.Errorf("%w: locking %s: %w", ErrUnwritable, path, err)
	}
	return &fileLock{f: f}, nil
}

// unlock releases the lock; closing the file does.
func (l *fileLock) unlock() error { return l.f.Close() }
