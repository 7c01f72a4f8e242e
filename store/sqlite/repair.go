package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RepairReport is what Repair found and what it changed.
type RepairReport struct {
	// Path is the database file, its symbolic links resolved.
	Path string
	// MovedLog is where Repair moved the log of an empty database file
	// (REAL-wal.orphan), or "" if it moved none.
	MovedLog string
	// Depth is the depth the file stored, Live the jobs not terminal
	// that it holds: Repair stores Live.
	Depth, Live int
	// Mark is the commit mark the lock file held, -1 for none; Commits
	// is the count of commits the file holds: Repair sets the mark to it.
	Mark, Commits int64

	_ struct{} // forbid positional literals
}

// Changed reports whether Repair changed the file, its log or its mark.
func (r RepairReport) Changed() bool {
	return r.MovedLog != "" || r.Depth != r.Live || r.Mark > r.Commits
}

// String says, a line each, what Repair found and what it changed.
func (r RepairReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "database %s\n", r.Path)
	if r.MovedLog != "" {
		fmt.Fprintf(&b, "moved the log of the empty database file to %s: the database starts empty\n", r.MovedLog)
	}
	if r.Depth != r.Live {
		fmt.Fprintf(&b, "depth: stored %d, %d jobs not terminal: stored %d\n", r.Depth, r.Live, r.Live)
	} else {
		fmt.Fprintf(&b, "depth: %d, as the jobs say: unchanged\n", r.Depth)
	}
	switch {
	case r.Mark > r.Commits:
		fmt.Fprintf(&b, "commits: the lock file recorded %d, the file holds %d: %d acknowledged commits are lost; mark set to %d\n",
			r.Mark, r.Commits, r.Mark-r.Commits, r.Commits)
	case r.Mark < 0:
		fmt.Fprintf(&b, "commits: the file holds %d, the lock file recorded none; mark set to %d\n", r.Commits, r.Commits)
	default:
		fmt.Fprintf(&b, "commits: the file holds %d, all %d the lock file recorded: unchanged\n", r.Commits, r.Mark)
	}
	if !r.Changed() {
		b.WriteString("nothing to repair\n")
	}
	return b.String()
}

// Repair makes the SQLite file at path one that Open accepts again, when
// Open refused it with ErrDepthMismatch or ErrMissingCommits, and reports
// what it found and changed: it stores the depth the jobs give, sets the
// lock file's commit mark to the commits the file holds (accepting that
// the others are lost), and moves aside the log of an empty database file.
// It takes the store's locks for its run, so it fails with ErrLocked while
// a store holds the file, and it refuses, changing nothing, a file that
// Open refuses for any other reason (ErrCorrupt, ErrForeign,
// ErrNewerSchema, ...). A file that does not exist is created, as Open
// would. It does not apply the restart: the next Open does.
func Repair(ctx context.Context, path string) (RepairReport, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return RepairReport{}, fmt.Errorf("%w: %s: %w", ErrUnwritable, path, err)
	}
	lock, err := lockFile(abs)
	if err != nil {
		return RepairReport{}, err
	}
	defer lock.unlock()
	r := RepairReport{Path: lock.real, Mark: -1}
	if mark, ok := lock.readMark(); ok {
		r.Mark = mark
	}
	if err := checkLog(lock.real); errors.Is(err, ErrMissingCommits) {
		r.MovedLog = lock.real + walSuffix + ".orphan"
		if err := os.Rename(lock.real+walSuffix, r.MovedLog); err != nil {
			return r, fmt.Errorf("%w: moving the log aside: %w", ErrUnwritable, err)
		}
	}
	db, err := openWriter(ctx, abs, lock.real)
	if err != nil {
		return r, fmt.Errorf("%w (database %s)", err, abs)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return r, classify(err)
	}
	defer tx.Rollback()
	if err := migrate(ctx, tx); err != nil {
		return r, classify(err)
	}
	if r.Commits, err = loadCommits(ctx, tx); err != nil {
		return r, err
	}
	err = tx.QueryRowContext(ctx, `SELECT
			(SELECT value FROM meta WHERE key = 'depth'),
			(SELECT count(*) FROM jobs WHERE seq IS NULL)`).Scan(&r.Depth, &r.Live)
	if err != nil {
		return r, fmt.Errorf("sqlite: reading the depth: %w", err)
	}
	if _, err := tx.ExecContext(ctx, queries[qSetDepth], r.Live); err != nil {
		return r, err
	}
	if err := tx.Commit(); err != nil {
		return r, fmt.Errorf("sqlite: committing the repair: %w", err)
	}
	if err := lock.writeMark(r.Commits); err != nil {
		return r, fmt.Errorf("%w: writing the commit mark: %w", ErrUnwritable, err)
	}
	if err := db.Close(); err != nil {
		return r, err
	}
	return r, nil
}
