package stress

import (
	"context"
	"errors"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Ledger is the surface a recorder drives: the job table's operations with
// string requests and results, each taking a context first. An
// implementation reports the ledger's outcomes with the contract's sentinel
// errors (an HTTP client maps 429 to ErrQueueFull, 404 to ErrNotFound, 409 to
// ErrNotDone, 422 to ErrKeyConflict) and the context's error when the caller's deadline ended a
// Wait; any other error means the outcome is unknown, and the recorder keeps
// the operation pending forever.
type Ledger interface {
	Submit(ctx context.Context, taskID, req string) (string, error)
	// SubmitKeyed is Submit under the idempotency key key for a request of
	// digest digest: the id of the job it created, or of the job holding
	// the key that it replayed (replayed true), or ErrKeyConflict.
	SubmitKeyed(ctx context.Context, key, digest, taskID, req string) (id string, replayed bool, err error)
	TakeRequest(ctx context.Context, id string) (string, error)
	Start(ctx context.Context, id string) error
	Finish(ctx context.Context, id, res string) error
	Fail(ctx context.Context, id, msg string) error
	Timeout(ctx context.Context, id, msg string) error
	State(ctx context.Context, id string) (ledgertype.State, error)
	Snapshot(ctx context.Context, id string) (ledgertype.Snapshot, error)
	Wait(ctx context.Context, id string) (ledgertype.Snapshot, error)
	Result(ctx context.Context, id string) (string, ledgertype.Snapshot, error)
}

// TableLedger adapts an in-process table to Ledger. Only Wait uses the
// context; the other calls never block. Start and the terminal calls drop
// the snapshot the table returns with their outcome: the history records
// the outcome alone for them.
type TableLedger struct {
	T *jobtable.Table[string, string]
}

var _ Ledger = TableLedger{}

func (l TableLedger) Submit(_ context.Context, taskID, req string) (string, error) {
	return l.T.Submit(taskID, req)
}

func (l TableLedger) SubmitKeyed(_ context.Context, key, digest, taskID, req string) (string, bool, error) {
	return l.T.SubmitKeyed(jobtable.Submission{TaskID: taskID, Key: key, Digest: digest}, req)
}

func (l TableLedger) TakeRequest(_ context.Context, id string) (string, error) {
	return l.T.TakeRequest(id)
}

func (l TableLedger) Start(_ context.Context, id string) error {
	_, err := l.T.Start(id)
	return err
}

func (l TableLedger) Finish(_ context.Context, id, res string) error {
	_, err := l.T.Finish(id, res)
	return err
}

func (l TableLedger) Fail(_ context.Context, id, msg string) error {
	_, err := l.T.Fail(id, errors.New(msg))
	return err
}

func (l TableLedger) Timeout(_ context.Context, id, msg string) error {
	_, err := l.T.Timeout(id, errors.New(msg))
	return err
}

func (l TableLedger) State(_ context.Context, id string) (ledgertype.State, error) {
	return l.T.State(id)
}

func (l TableLedger) Snapshot(_ context.Context, id string) (ledgertype.Snapshot, error) {
	return l.T.Snapshot(id)
}

func (l TableLedger) Wait(ctx context.Context, id string) (ledgertype.Snapshot, error) {
	return l.T.Wait(ctx, id)
}

func (l TableLedger) Result(_ context.Context, id string) (string, ledgertype.Snapshot, error) {
	return l.T.Result(id)
}

// StoreLedger adapts a store of the contract to Ledger, with the same
// simplifications as TableLedger.
type StoreLedger struct {
	L ledger.Ledger[string, string]
}

var _ Ledger = StoreLedger{}

func (l StoreLedger) Submit(ctx context.Context, taskID, req string) (string, error) {
	id, _, err := l.L.Submit(ctx, ledger.Submission{TaskID: taskID}, req)
	return id, err
}

func (l StoreLedger) SubmitKeyed(ctx context.Context, key, digest, taskID, req string) (string, bool, error) {
	return l.L.Submit(ctx, ledger.Submission{TaskID: taskID, Key: key, Digest: digest}, req)
}

func (l StoreLedger) TakeRequest(ctx context.Context, id string) (string, error) {
	return l.L.TakeRequest(ctx, id)
}

func (l StoreLedger) Start(ctx context.Context, id string) error {
	_, err := l.L.Start(ctx, id)
	return err
}

func (l StoreLedger) Finish(ctx context.Context, id, res string) error {
	_, err := l.L.Finish(ctx, id, res)
	return err
}

func (l StoreLedger) Fail(ctx context.Context, id, msg string) error {
	_, err := l.L.Fail(ctx, id, errors.New(msg))
	return err
}

func (l StoreLedger) Timeout(ctx context.Context, id, msg string) error {
	_, err := l.L.Timeout(ctx, id, errors.New(msg))
	return err
}

func (l StoreLedger) State(ctx context.Context, id string) (ledgertype.State, error) {
	return l.L.State(ctx, id)
}

func (l StoreLedger) Snapshot(ctx context.Context, id string) (ledgertype.Snapshot, error) {
	return l.L.Snapshot(ctx, id)
}

func (l StoreLedger) Wait(ctx context.Context, id string) (ledgertype.Snapshot, error) {
	return l.L.Wait(ctx, id)
}

func (l StoreLedger) Result(ctx context.Context, id string) (string, ledgertype.Snapshot, error) {
	return l.L.Result(ctx, id)
}
