package postgres

import "errors"

// Sentinel errors of Open, each wrapped with the cause; compare with
// errors.Is. Every one means that Open left no store open. The calls of an
// open Store return the ledger package's sentinels (ledger.ErrQueueFull,
// ledger.ErrClosed, ...).
var (
	// ErrUnreachable: the database cannot be connected to, or refused
	// the connection (a wrong DSN, a server that is down).
	ErrUnreachable = errors.New("postgres: cannot connect to the database")
	// ErrForeign: the database holds a table named like the ledger's
	// that this package did not make.
	ErrForeign = errors.New("postgres: not a job ledger database")
	// ErrNewerSchema: the database was migrated by a newer version of
	// this package, whose schema this one does not know.
	ErrNewerSchema = errors.New("postgres: database schema is newer than this program")
	// ErrDepthMismatch: the stored depth is not the number of jobs that
	// are not terminal, so the admission bound cannot be trusted.
	ErrDepthMismatch = errors.New("postgres: stored depth disagrees with the jobs")
)

// InterruptedByRestart is the error message of a job that its replica was
// running when that replica's store was last closed or its process
// stopped: Open, under the same replica name, ends it FAILED with this
// message.
const InterruptedByRestart = "interrupted by restart"

// notifyChannel is the channel every terminal transition notifies, with
// the job's id as the payload.
const notifyChannel = "jobledger_end"

// workChannel is the channel every admission notifies, and Open when it
// releases taken requests: a job may have become claimable. Its payload
// is empty, so the notifications of one transaction merge into one.
const workChannel = "jobledger_work"
