package jobtable

import "errors"

// Sentinel errors. Compare with errors.Is.
var (
	// ErrQueueFull is returned by Submit when MaxQueue jobs are already
	// admitted and not yet terminal (the seed's 429).
	ErrQueueFull = errors.New("jobtable: queue full")
	// ErrNotFound is returned for an id the table does not hold: never
	// issued, or evicted by retention.
	ErrNotFound = errors.New("jobtable: job not found")
	// ErrNotPending is returned by Start for a job that is not PENDING.
	ErrNotPending = errors.New("jobtable: job not pending")
	// ErrTerminal is returned by Finish, Fail and Timeout for a job that is
	// already terminal. The call changed nothing (the seed's "false"). It is
	// also returned by TakeRequest for a terminal job: the terminal
	// transition drops the request, taken or not.
	ErrTerminal = errors.New("jobtable: job already terminal")
	// ErrNotDone is returned by Result for a job that is not DONE.
	ErrNotDone = errors.New("jobtable: job not done")
	// ErrRequestTaken is returned by TakeRequest for a job that is not
	// terminal once its request has been moved out.
	ErrRequestTaken = errors.New("jobtable: request already taken")
	// ErrKeyConflict is returned by SubmitKeyed when a retained job was
	// submitted under the same idempotency key with another request
	// (another digest). Nothing is admitted.
	ErrKeyConflict = errors.New("jobtable: idempotency key used for another request")
	// ErrBadQuery is returned by List for a query it cannot answer: a
	// negative limit, or a state filter that is no State.
	ErrBadQuery = errors.New("jobtable: invalid list query")
	// ErrNoCause is the error of a job that Fail or Timeout ended with a
	// nil cause: a FAILED or TIMEOUT job always carries an error
	// (PayloadConsistencyInv).
	ErrNoCause = errors.New("jobtable: ended with no cause")
	// ErrInvalidConfig wraps every reason New refuses a Config.
	ErrInvalidConfig = errors.New("jobtable: invalid config")
)
