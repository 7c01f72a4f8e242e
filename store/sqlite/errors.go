package sqlite

import "errors"

// Sentinel errors of Open, each wrapped with the path and the cause; compare
// with errors.Is. Every one means that Open changed nothing it could not
// undo and left no store open: a file it cannot use is refused, never
// replaced by a fresh database. The calls of an open Store return the
// ledger package's sentinels (ledger.ErrQueueFull, ledger.ErrClosed, ...).
var (
	// ErrLocked: another Store, in this process or another, holds the
	// database (the file the path resolves to, REAL, or its lock file
	// REAL.lock, is locked), or could hold it unseen: the file has more
	// than one hard link.
	ErrLocked = errors.New("sqlite: database in use by another store")
	// ErrUnwritable: the database cannot be created, opened or written:
	// a missing or read-only directory, a path that is a directory, a
	// read-only file.
	ErrUnwritable = errors.New("sqlite: cannot write the database")
	// ErrCorrupt: the file is not an SQLite database, or fails
	// PRAGMA quick_check.
	ErrCorrupt = errors.New("sqlite: database file is corrupt")
	// ErrForeign: an SQLite database that some other program made: it has
	// tables but not the ledger's.
	ErrForeign = errors.New("sqlite: not a job ledger database")
	// ErrNewerSchema: the database was migrated by a newer version of this
	// package, whose schema this one does not know.
	ErrNewerSchema = errors.New("sqlite: database schema is newer than this program")
	// ErrDepthMismatch: the stored depth is not the number of jobs that
	// are not terminal, so the admission bound cannot be trusted.
	ErrDepthMismatch = errors.New("sqlite: stored depth disagrees with the jobs")
	// ErrMissingCommits: the file lacks transactions that a store
	// committed and acknowledged: it holds fewer than the commit mark in
	// its lock file records, or it is empty beside a log that holds
	// frames. Its log was removed or cut short, or the file was removed,
	// truncated or replaced by an older copy. Repair accepts it as it is.
	ErrMissingCommits = errors.New("sqlite: database lacks commits it acknowledged")
)

// ErrDetached is the error of every write of an open Store once its path no
// longer names the file it holds, or the log beside that file is gone (it
// was removed, renamed or replaced): what it committed there is not what
// the next Open of the path will find. The Store refuses every later
// write with it; reads go on from the file it holds.
var ErrDetached = errors.New("sqlite: database file removed or replaced under the store; writes refused")

// ErrTooLarge is the error of a write of an open Store that carries more
// bytes than Options.MaxValueBytes (wrapped with the sizes): it is refused
// before it is queued and changes nothing. The other errors of the calls
// are the ledger package's sentinels (ledger.ErrQueueFull, ...).
var ErrTooLarge = errors.New("sqlite: write too large")

// InterruptedByRestart is the error message of a job that was RUNNING when
// its process stopped: Open ends it FAILED with this message.
const InterruptedByRestart = "interrupted by restart"
