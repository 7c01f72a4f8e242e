package jobapi

import (
	"errors"
	"strings"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrInvalidConfig wraps every reason New, Config.Validate or
	// cmd/jobserver's config parsing refuses a configuration.
	ErrInvalidConfig = errors.New("jobapi: invalid config")
	// ErrUnknownModel is returned by NewModel for a name it does not know.
	ErrUnknownModel = errors.New("jobapi: unknown model")
	// ErrCanceled is the cause of a job cancelled through the API. On the
	// wire its error reads "canceled".
	ErrCanceled = errors.New("jobapi: canceled")
	// ErrDeadline is the cause of a job that passed its deadline. On the
	// wire its error reads "deadline exceeded".
	ErrDeadline = errors.New("jobapi: deadline exceeded")
	// ErrShuttingDown is the cause of a job still unfinished when the
	// shutdown grace period ended, and the reason new work is refused during
	// shutdown. On the wire it reads "server shutting down".
	ErrShuttingDown = errors.New("jobapi: server shutting down")
	// ErrModelPanic wraps the value of a model that panicked. On the wire it
	// reads "model panicked: <value>".
	ErrModelPanic = errors.New("jobapi: model panicked")
	// ErrStoreFailed is the cause of a job the server ended because its
	// store failed a write for it (taking its request, starting it, or
	// recording its outcome), and of a job recovered whose request an
	// earlier process had already taken. On the wire it reads "job store
	// failure".
	ErrStoreFailed = errors.New("jobapi: job store failure")
)

// jobError is an error recorded in the ledger: its message is what clients
// read in the "error" field, and it unwraps to the sentinel that caused it.
type jobError struct {
	msg   string
	cause error
}

func (e *jobError) Error() string { return e.msg }
func (e *jobError) Unwrap() error { return e.cause }

// wireError returns an error reading like sentinel without the package
// prefix, plus detail when detail is not empty, that unwraps to sentinel.
func wireError(sentinel error, detail string) error {
	msg := strings.TrimPrefix(sentinel.Error(), "jobapi: ")
	if detail != "" {
		msg += ": " + detail
	}
	return &jobError{msg: msg, cause: sentinel}
}
