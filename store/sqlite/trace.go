//go:build sqlite_trace

package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Trace logging for trace validation (spec/trace-durable.mjs checks the
// log against spec/DurableLedger.tla). Built only with the tag
// sqlite_trace; trace_nop.go stands in for it otherwise.
//
// The log is in commit order: the writer keeps the events of the batch it
// is applying (one Take per write, in the order applied) and logs them,
// then a Commit with the rows the file holds, once its COMMIT has
// returned and before anyone is answered; a batch that fails logs
// nothing, as it changed nothing. Open logs, after its transaction
// committed, the RUNNING jobs it failed and the rows; Close logs once the
// writer has stopped. One store at a time may be traced in a process.

// traceEvent is one line of the log. Times are Unix nanoseconds.
type traceEvent struct {
	A  string `json:"a"`            // Take, Keyed, Commit, Open, Close
	K  string `json:"k,omitempty"`  // Take: Submit, Start or End
	J  string `json:"j,omitempty"`  // the job id
	To string `json:"to,omitempty"` // Take of an End: the terminal state asked for
	R  string `json:"r,omitempty"`  // the writer's answer: ok or the error's name
	St string `json:"st,omitempty"` // Take: the job's row's state after it ("": no row)
	D  *int   `json:"d,omitempty"`  // the depth after it (Commit, Open: the one stored)
	// Ev: the rows a Submit's retention pass deleted or counted for
	// deletion at the batch's end.
	Ev  *uint64 `json:"ev,omitempty"`
	Now *int64  `json:"now,omitempty"` // Take, Open: the time it ran at
	// Commit, Open: every row of the file, live ones first, then the
	// terminal ones in completion (seq) order.
	Rows []traceRow `json:"rows,omitempty"`
	// Open: the RUNNING jobs it failed, in the order of their seqs.
	Failed []string `json:"failed,omitempty"`
}

type traceRow struct {
	J  string `json:"j"`
	St string `json:"st"`
}

var tracer struct {
	on     atomic.Bool
	mu     sync.Mutex
	events []traceEvent
	batch  []traceEvent // the batch being applied, or Open's failed jobs
	failed []string
}

// TraceBegin starts a log; TraceEnd stops it and returns it as ndjson.
// Neither may run while a store is open.
func TraceBegin() {
	tracer.mu.Lock()
	tracer.events, tracer.batch, tracer.failed = nil, nil, nil
	tracer.mu.Unlock()
	tracer.on.Store(true)
}

func TraceEnd() ([]byte, error) {
	tracer.on.Store(false)
	tracer.mu.Lock()
	ev := tracer.events
	tracer.events = nil
	tracer.mu.Unlock()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range ev {
		if err := enc.Encode(e); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }

func traceBatchBegin() {
	if tracer.on.Load() {
		tracer.mu.Lock()
		tracer.batch = tracer.batch[:0]
		tracer.mu.Unlock()
	}
}

// traceEvicted is the count of evictions so far, before a write.
func traceEvicted(v *view) uint64 { return v.evictedTTL + v.evictedLRU }

// traceApplied notes write o, applied at now with reply r, leaving view v;
// ev0 is traceEvicted before it. A write not run (its context ended) and
// a duplicate id (a panic of the caller) are no action.
func traceApplied(o *op, r reply, v *view, now int64, ev0 uint64) {
	if !tracer.on.Load() || r.panicked != nil || (r.err != nil && r.err == o.ctx.Err()) {
		return
	}
	e := traceEvent{A: "Take", J: o.id, R: errName(r.err), D: ptr(v.depth), Now: ptr(now)}
	switch {
	case r.replayed || errors.Is(r.err, ledger.ErrKeyConflict):
		e = traceEvent{A: "Keyed", J: r.snap.ID, R: errName(r.err)}
		if r.replayed {
			e.R = "replay"
		}
	case o.kind == opSubmit:
		e.K = "Submit"
		if r.err == nil {
			e.St = ledgertype.Pending.String()
		}
		e.Ev = ptr(traceEvicted(v) - ev0)
	case o.kind == opStart:
		e.K = "Start"
	default:
		e.K, e.To = "End", o.kind.terminalState().String()
	}
	if o.kind != opSubmit && r.snap.ID != "" {
		e.St = r.snap.State.String()
	}
	tracer.mu.Lock()
	tracer.batch = append(tracer.batch, e)
	tracer.mu.Unlock()
}

// traceCommitted logs the batch the writer is answering, which has
// committed (or wrote nothing and committed nothing), with the rows and
// the depth the file holds.
func traceCommitted(s *Store) {
	if !tracer.on.Load() {
		return
	}
	rows, depth := traceRows(s)
	tracer.mu.Lock()
	tracer.events = append(tracer.events, tracer.batch...)
	tracer.events = append(tracer.events, traceEvent{A: "Commit", D: ptr(depth), Rows: rows})
	tracer.batch = tracer.batch[:0]
	tracer.mu.Unlock()
}

func traceFailedRunning(ids []string) {
	if tracer.on.Load() {
		tracer.mu.Lock()
		tracer.failed = append([]string(nil), ids...)
		tracer.mu.Unlock()
	}
}

// traceOpened logs Open's restart, committed at now.
func traceOpened(s *Store, _ *view, now int64) {
	if !tracer.on.Load() {
		return
	}
	rows, depth := traceRows(s)
	tracer.mu.Lock()
	tracer.events = append(tracer.events, traceEvent{A: "Open", D: ptr(depth), Now: ptr(now),
		Rows: rows, Failed: tracer.failed})
	tracer.failed = nil
	tracer.mu.Unlock()
}

func traceClosed() {
	if tracer.on.Load() {
		tracer.mu.Lock()
		tracer.events = append(tracer.events, traceEvent{A: "Close"})
		tracer.mu.Unlock()
	}
}

// traceRows reads every row of the file, and the depth stored, on the
// write connection, which only the caller (the writer, or Open before it
// starts one) uses. A failure to read is logged as a row the checker
// knows no job by.
func traceRows(s *Store) ([]traceRow, int) {
	ctx := context.Background()
	depth := -1
	if err := s.wdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'depth'`).Scan(&depth); err != nil {
		return []traceRow{{J: "?", St: err.Error()}}, depth
	}
	rows, err := s.wdb.QueryContext(ctx, `SELECT id, state FROM jobs ORDER BY seq IS NOT NULL, seq, id`)
	if err != nil {
		return []traceRow{{J: "?", St: err.Error()}}, depth
	}
	defer rows.Close()
	var out []traceRow
	for rows.Next() {
		var id string
		var st int
		if err := rows.Scan(&id, &st); err != nil {
			return append(out, traceRow{J: "?", St: err.Error()}), depth
		}
		out = append(out, traceRow{J: id, St: ledger.State(st).String()})
	}
	if err := rows.Err(); err != nil {
		out = append(out, traceRow{J: "?", St: err.Error()})
	}
	return out, depth
}

func errName(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{nil, "ok"}, {ledger.ErrNotFound, "ErrNotFound"}, {ledger.ErrNotPending, "ErrNotPending"},
		{ledger.ErrTerminal, "ErrTerminal"}, {ledger.ErrKeyConflict, "ErrKeyConflict"},
		{ledger.ErrQueueFull, "ErrQueueFull"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return err.Error()
}
