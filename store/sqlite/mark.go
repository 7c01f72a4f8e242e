package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// The commit mark: meta's 'commits' counts the transactions committed to
// the file (each batch's and each Open's adds one, in the transaction
// itself), and after each commit, before anyone is answered, the writer
// writes the count into the lock file. The lock file lives outside SQLite's
// files, so what damages the database or its log leaves the mark alone: a
// file whose count is below the mark lacks commits that were acknowledged
// (ErrMissingCommits at Open). The mark is written without an fsync: a
// crash of the process keeps it (it is in the kernel), a crash of the
// machine may leave an older, lower one, which checks less but never
// refuses a file that is whole, as the count is on disk before the mark is
// written.

// walSuffix names a database's log: SQLite keeps REAL's in REAL-wal.
const walSuffix = "-wal"

// walHeaderSize is the size of a log's header; a log longer than this
// holds frames.
const walHeaderSize = 32

// markWidth is the width of the mark in the lock file: decimal digits,
// zero-padded, so that each write covers the last.
const markWidth = 20

// readMark returns the mark in the lock file, or ok false if it holds none
// that can be read (a lock file of an older version is empty).
func (l *fileLock) readMark() (mark int64, ok bool) {
	b := make([]byte, markWidth+1)
	n, _ := l.side.ReadAt(b, 0)
	v, err := strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// writeMark stores n as the mark. An error leaves an older mark, which is
// lower: it is the caller's to ignore.
func (l *fileLock) writeMark(n int64) error {
	_, err := l.side.WriteAt(fmt.Appendf(nil, "%0*d\n", markWidth, n), 0)
	return err
}

// checkMark returns an error wrapping ErrMissingCommits if the file, which
// holds commits transactions, holds fewer than the mark records.
func (l *fileLock) checkMark(commits int64) error {
	if mark, ok := l.readMark(); ok && mark > commits {
		return fmt.Errorf("%w: it holds %d commits, its lock file %s.lock records %d: %d acknowledged commits are missing",
			ErrMissingCommits, commits, l.real, mark, mark-commits)
	}
	return nil
}

// checkLog returns an error wrapping ErrMissingCommits if the database
// file real is empty while its log holds frames: the file was removed (and
// created anew by Open) or truncated. SQLite would delete such a log as
// stale and start a fresh database.
func checkLog(real string) error {
	db, err := os.Stat(real)
	if err != nil || db.Size() > 0 {
		return nil // SQLite will say what is wrong with it
	}
	wal, err := os.Stat(real + walSuffix)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && wal.Size() <= walHeaderSize) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnwritable, err)
	}
	return fmt.Errorf("%w: %s is empty but its log %s holds %d bytes: the file was removed or truncated",
		ErrMissingCommits, real, real+walSuffix, wal.Size())
}
