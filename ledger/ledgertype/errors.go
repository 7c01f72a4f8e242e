package ledgertype

import "errors"

// The contract's sentinel errors. Every store returns these values, so
// errors.Is compares them across stores; each means that nothing changed.
var (
	// ErrQueueFull: MaxQueue jobs are already PENDING or RUNNING.
	ErrQueueFull = errors.New("ledger: queue full")
	// ErrNotFound: no retained job has the id (never issued, or evicted),
	// or no retained job holds the key.
	ErrNotFound = errors.New("ledger: job not found")
	// ErrNotPending: Start on a job that is not PENDING.
	ErrNotPending = errors.New("ledger: job not pending")
	// ErrTerminal: an end of a job that already ended, or TakeRequest on
	// one (the end drops the request, taken or not).
	ErrTerminal = errors.New("ledger: job already terminal")
	// ErrNotDone: Result of a job that is not DONE.
	ErrNotDone = errors.New("ledger: job not done")
	// ErrRequestTaken: TakeRequest of a live job whose request was taken.
	ErrRequestTaken = errors.New("ledger: request already taken")
	// ErrKeyConflict: a retained job holds the idempotency key with
	// another digest.
	ErrKeyConflict = errors.New("ledger: idempotency key used for another request")
	// ErrBadQuery: a List query no store can answer (a negative limit, a
	// state filter that is no State).
	ErrBadQuery = errors.New("ledger: invalid list query")
	// ErrBadCursor: a List cursor that no store made.
	ErrBadCursor = errors.New("ledger: invalid cursor")
	// ErrNoCause is the error of a job failed or timed out with a nil
	// cause: a FAILED or TIMEOUT job always carries an error.
	ErrNoCause = errors.New("ledger: ended with no cause")
	// ErrInvalidConfig wraps every reason a store refuses its Config.
	ErrInvalidConfig = errors.New("ledger: invalid config")
	// ErrClosed: any call after Close.
	ErrClosed = errors.New("ledger: closed")
	// ErrUnstorable: a store whose database cannot hold the text refuses
	// a task id, key or digest that is not valid UTF-8 or holds a NUL.
	ErrUnstorable = errors.New("ledger: text the store cannot hold")
	// ErrNoWork: a shared store's Claim found no claimable job.
	ErrNoWork = errors.New("ledger: no claimable job")
)
