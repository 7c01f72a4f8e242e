package ledger

import "errors"

// CauseText is the form a store that keeps only messages stores a job's
// error in: the message of cause, or of ErrNoCause for nil (a FAILED or
// TIMEOUT job always has an error).
func CauseText(cause error) string {
	if cause == nil {
		cause = ErrNoCause
	}
	return cause.Error()
}

// CauseFromText is CauseText's inverse, as far as it goes: ErrNoCause for
// its text, so that errors.Is finds it on every store, and an error with
// the message msg otherwise.
func CauseFromText(msg string) error {
	if msg == ErrNoCause.Error() {
		return ErrNoCause
	}
	return errors.New(msg)
}
