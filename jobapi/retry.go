package jobapi

import (
	"context"
	"errors"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// A runner's write that the store fails in passing (a full disk, an I/O
// error, a busy database) is tried again after a pause, until it commits,
// rather than leave its job holding a place in the queue with nobody to
// end it: a start until the job's context ends, an end until the store's
// writes end (Close, or Shutdown's hard stop). A retried end that finds
// the job ended (the failed try committed after all, or a cancel came
// first) records nothing more, so no job ends twice.

// Backoff of the retries: the first pause, and the longest, which bounds
// how long a job waits once the store takes writes again.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// retryBackoff is the pause before retry n (0 for the first): retryFirst,
// doubled at each retry up to retryMax.
func retryBackoff(n int) time.Duration {
	d := retryFirst
	for i := 0; i < n && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// transientReporter is a store that says which of its failures may pass
// (the SQLite store's Transient), found with ledger.As.
type transientReporter interface {
	Transient(err error) bool
}

// refusals are the answers of a store that a retry cannot change: the
// contract's sentinels and the end of the write's context. A store's own
// lasting failures (a value too large for it) are told apart by its
// Transient.
var refusals = []error{
	ledger.ErrQueueFull, ledger.ErrNotFound, ledger.ErrNotPending, ledger.ErrTerminal,
	ledger.ErrNotDone, ledger.ErrRequestTaken, ledger.ErrKeyConflict, ledger.ErrClosed,
	ledger.ErrUnstorable, ledger.ErrInvalidConfig,
	context.Canceled, context.DeadlineExceeded,
}

// storeFailure reports whether err, from a call of the store, is a failure
// of the store itself rather than one of its refusals: its outcome is
// unknown.
func storeFailure(err error) bool {
	if err == nil {
		return false
	}
	for _, r := range refusals {
		if errors.Is(err, r) {
			return false
		}
	}
	return true
}

// retryable reports whether a write that failed with err is worth trying
// again: a failure of the store that the store does not call lasting (one
// that says nothing either way is taken at its word that the outcome is
// unknown).
func (e *executor) retryable(err error) bool {
	if !storeFailure(err) {
		return false
	}
	return e.transient == nil || e.transient.Transient(err)
}

// pause waits out the backoff before retry n, by the server's clock. It
// reports false, at once, when done is closed or the store's writes end
// first.
func (e *executor) pause(done <-chan struct{}, n int) bool {
	fired := make(chan struct{})
	stop := e.clock.AfterFunc(retryBackoff(n), func() { close(fired) })
	select {
	case <-fired:
		return true
	case <-done:
	case <-e.writes.Done():
	}
	stop()
	return false
}
