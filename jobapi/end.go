package jobapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Every end of a job goes through end, the one write of a terminal
// transition (its metric and log line with it). Two policies call it:
// record, a runner's or a timer's end, which must commit and so is retried
// and, when refused for good, replaced by FAILED "job store failure"; and
// cancelJob, a client's cancel, tried once, whose answer the client gets as
// the store gave it.

// ended reports whether err, from a call on one job, says the job has
// ended (or been evicted since), so that there is nothing left to do.
func ended(err error) bool {
	return errors.Is(err, ledger.ErrTerminal) || errors.Is(err, ledger.ErrNotPending) || errors.Is(err, ledger.ErrNotFound)
}

// cancelJob ends a job that is not terminal FAILED "canceled" and cancels
// its model's context, and returns the snapshot the transition produced. It
// returns ledger.ErrTerminal with the job's (terminal) snapshot, or
// ledger.ErrNotFound, when there is nothing to cancel, and a failure of the
// store as it came.
func (e *executor) cancelJob(id string) (ledger.Snapshot, error) {
	snap, err := e.end(id, ledgertype.Failed, nil, wireError(ErrCanceled, ""))
	if err != nil {
		return snap, err
	}
	e.mu.Lock()
	cancel := e.flights[id]
	e.mu.Unlock()
	if cancel != nil {
		cancel(ErrCanceled)
	}
	return snap, nil
}

// byCause is the end of a job whose context ended with cause: TIMEOUT for
// its deadline, FAILED with the cause otherwise.
func byCause(cause error) (ledger.State, error) {
	switch {
	case errors.Is(cause, ErrDeadline):
		return ledgertype.TimedOut, wireError(ErrDeadline, "")
	case errors.Is(cause, ErrCanceled), errors.Is(cause, ErrShuttingDown):
		return ledgertype.Failed, wireError(cause, "")
	default:
		return ledgertype.Failed, cause
	}
}

// record is a runner's end of its job. A job already ended is left as it
// is, and logged (its model's outcome is lost). An end the store fails in
// passing (a full disk) is tried again (retry.go) until it commits, the
// job is found ended, or the store's writes end (Close, Shutdown's hard
// stop). One the store refuses for good (a result it cannot hold) is
// replaced by FAILED "job store failure", so that the job does not stay
// live with no runner. A job the store will not end at all is logged, and
// stays live until the store is reopened (a durable store then ends it
// FAILED "interrupted by restart") or, on a PostgreSQL store, until its
// lease lapses, unrenewed once an end was tried, and a reaper ends it
// FAILED "worker lost".
func (e *executor) record(id string, state ledger.State, res json.RawMessage, cause error) {
	for n := 0; ; n++ {
		snap, err := e.end(id, state, res, cause)
		switch {
		case err == nil:
			return
		case ended(err):
			as := "gone" // evicted since
			if snap.ID != "" {
				as = snap.State.String()
			}
			e.log.Warn("job end refused: the job had ended", "job_id", id, "state", state.String(),
				"ended_as", as, "ended_with", snap.Err)
			return
		case e.retryable(err):
			if e.pause(nil, n) {
				continue
			}
		case state != ledgertype.Failed || !errors.Is(cause, ErrStoreFailed):
			state, res, cause = ledgertype.Failed, nil, wireError(ErrStoreFailed, "")
			continue
		}
		e.log.Error("job left live: the store refused to end it", "job_id", id, "error", err)
		return
	}
}

// end records the terminal transition to state and returns the snapshot
// the store produced with it (with ledger.ErrTerminal, the job's current
// one); when it happened (the job was not already terminal) it counts it
// and logs one line. Everything it reports comes from that snapshot, not
// from a later lookup, which a Submit evicting the job could answer 404.
// A failure of the store is logged and returned.
func (e *executor) end(id string, state ledger.State, res json.RawMessage, cause error) (ledger.Snapshot, error) {
	var (
		snap ledger.Snapshot
		err  error
	)
	switch state {
	case ledgertype.Done:
		snap, err = e.store.Finish(e.writes, id, res)
	case ledgertype.TimedOut:
		snap, err = e.store.Timeout(e.writes, id, cause)
	default:
		snap, err = e.store.Fail(e.writes, id, cause)
	}
	e.noteWrite(err)
	if err != nil {
		if !ended(err) {
			e.log.Error("job store failed", "op", "end", "job_id", id, "state", state.String(), "error", err)
		}
		return snap, err
	}
	e.metrics.completed.WithLabelValues(state.String()).Inc()
	attrs := []slog.Attr{slog.String("job_id", id), slog.String("state", state.String()),
		slog.String("task_id", snap.TaskID)}
	if !snap.StartedAt.IsZero() {
		run := snap.CompletedAt.Sub(snap.StartedAt)
		e.metrics.runTime.Observe(run.Seconds())
		attrs = append(attrs, slog.Float64("queue_wait_ms", millis(snap.StartedAt.Sub(snap.CreatedAt))),
			slog.Float64("run_ms", millis(run)))
	}
	if cause != nil {
		attrs = append(attrs, slog.String("error", cause.Error()))
	}
	e.log.LogAttrs(context.Background(), slog.LevelInfo, "job ended", attrs...)
	return snap, nil
}

// millis is d in milliseconds, for log lines.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
