package jobtable

import "github.com/jobledger/jobledger/ledger/ledgertype"

// The table's errors are the ledger contract's sentinels (package
// ledgertype); compare with errors.Is.
var (
	// ErrQueueFull is returned by Submit when MaxQueue jobs are already
	// admitted and not yet terminal.
	ErrQueueFull = ledgertype.ErrQueueFull
	// ErrNotFound is returned for an id the table does not hold: never
	// issued, or evicted by retention.
	ErrNotFound = ledgertype.ErrNotFound
	// ErrNotPending is returned by Start for a job that is not PENDING.
	ErrNotPending = ledgertype.ErrNotPending
	// ErrTerminal is returned by Finish, Fail and Timeout for a job that is
	// already terminal, changing nothing, and by TakeRequest for a terminal
	// job: the terminal transition drops the request, taken or not.
	ErrTerminal = ledgertype.ErrTerminal
	// ErrNotDone is returned by Result for a job that is not DONE.
	ErrNotDone = ledgertype.ErrNotDone
	// ErrRequestTaken is returned by TakeRequest for a job that is not
	// terminal once its request has been moved out.
	ErrRequestTaken = ledgertype.ErrRequestTaken
	// ErrKeyConflict is returned by SubmitKeyed when a retained job was
	// submitted under the same idempotency key with another digest.
	// Nothing is admitted.
	ErrKeyConflict = ledgertype.ErrKeyConflict
	// ErrBadQuery is returned by List for a query it cannot answer: a
	// negative limit, or a state filter that is no State.
	ErrBadQuery = ledgertype.ErrBadQuery
	// ErrNoCause is the error of a job that Fail or Timeout ended with a
	// nil cause: a FAILED or TIMEOUT job always carries an error
	// (PayloadConsistencyInv).
	ErrNoCause = ledgertype.ErrNoCause
	// ErrInvalidConfig wraps every reason New refuses a Config.
	ErrInvalidConfig = ledgertype.ErrInvalidConfig
)
