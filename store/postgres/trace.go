//go:build postgres_trace

package postgres

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// Trace logging for trace validation (spec/trace-shared.mjs checks the
// log against spec/SharedLedger.tla). Built only with the tag
// postgres_trace; trace_nop.go stands in for it otherwise.
//
// The log is in commit order, as the database decided it: every traced
// transaction (a writer's batch, a reaper's round, Open's restart) ends
// by incrementing the one row of the table jobledger_trace, which it then
// holds until it commits, so the counters it reads are in commit order;
// after the increment, in the same transaction, it reads the depth and
// every row of jobs, which are then the state its commit leaves. An event
// is logged once its transaction committed; a Close is logged after the
// commits its store made, at the counter it reads then. The stores of
// every replica traced in one process share one log.

// traceEvent is one line of the log. Times are Unix nanoseconds.
type traceEvent struct {
	A   string `json:"a"`             // Batch, Reap, Open, Close
	R   string `json:"r"`             // the replica
	N   int64  `json:"n"`             // the commit's counter (Close: the counter it read)
	Now *int64 `json:"now,omitempty"` // the time its writes ran at
	// Batch: the number of Submits in it and the ids admitted, in order
	// (the others were refused); the worker's write, "claim" or "end"
	// ("" for none), with its job (a claim answered ErrNoWork: none) and,
	// for an end, the answer (ok or ErrTerminal) and the state it asked.
	Sub int      `json:"sub,omitempty"`
	New []string `json:"new,omitempty"`
	W   string   `json:"w,omitempty"`
	J   string   `json:"j,omitempty"`
	Er  string   `json:"er,omitempty"`
	To  string   `json:"to,omitempty"`
	// Seen: a batch with a claim: the counter its claim saw at least.
	Seen *int64 `json:"seen,omitempty"`
	// Reap: the jobs it ended; Open: the RUNNING jobs the restart failed.
	Jobs []string `json:"jobs,omitempty"`
	D    *int     `json:"d,omitempty"` // the depth its commit left
	// Every row of jobs its commit left: the live ones first, then the
	// terminal ones in completion (seq) order.
	Rows []traceRow `json:"rows,omitempty"`

	key int64 // the place in the log: 2n, or 2n+1 for a Close after commit n
}

// traceRow is one row of jobs; a RUNNING one with its lease's owner and
// expiry.
type traceRow struct {
	J  string `json:"j"`
	St string `json:"st"`
	O  string `json:"o,omitempty"`
	E  *int64 `json:"e,omitempty"`
}

// traceStamp is what a traced transaction read at its end: its counter,
// the depth and the rows.
type traceStamp struct {
	n     int64
	seen  int64 // a batch with a claim: the counter read before the claim
	depth int
	rows  []traceRow
}

var tracer struct {
	on     atomic.Bool
	mu     sync.Mutex
	events []traceEvent
}

// The statements a traced transaction ends with.
const (
	qTraceCount = `UPDATE jobledger_trace SET n = n + 1 WHERE id = 1 RETURNING n`
	qTraceRows  = `SELECT (SELECT depth FROM ledger WHERE id = 1), coalesce((SELECT json_agg(json_build_object(
			'j', id, 'st', state, 'o', owner, 'e', lease_until) ORDER BY seq IS NOT NULL, seq, n) FROM jobs), '[]')::text`
)

// TraceBegin creates the table jobledger_trace on the database dsn names
// (once) and starts a log; TraceEnd stops it and returns it as ndjson.
// Neither may run while a traced store is open. It turns the database's
// JIT off for later sessions: the stores run with enable_seqscan off, and
// the trace's read of every row, costed as a disabled scan, would be
// compiled each time.
func TraceBegin(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS jobledger_trace (id int PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO jobledger_trace VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
		DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET jit = off', current_database()); END $$`); err != nil {
		return err
	}
	tracer.mu.Lock()
	tracer.events = nil
	tracer.mu.Unlock()
	tracer.on.Store(true)
	return nil
}

func TraceEnd() ([]byte, error) {
	tracer.on.Store(false)
	tracer.mu.Lock()
	ev := tracer.events
	tracer.events = nil
	tracer.mu.Unlock()
	slices.SortStableFunc(ev, func(a, b traceEvent) int { return cmp.Compare(a.key, b.key) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range ev {
		if err := enc.Encode(e); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// traceStart is the stamp of a batch, or nil if no log is on. queue ends
// the batch with the trace's statements, and scan reads them, after
// every other result of the batch; queueSeen, right before the batch's
// claim, reads the counter, which scanSeen reads back: the claim saw at
// least the commits up to it.
func traceStart() *traceStamp {
	if !tracer.on.Load() {
		return nil
	}
	return &traceStamp{}
}

func (st *traceStamp) queue(b *pgx.Batch) {
	if st != nil {
		b.Queue(qTraceCount)
		b.Queue(qTraceRows)
	}
}

func (st *traceStamp) queueSeen(b *pgx.Batch) {
	if st != nil {
		b.Queue(`SELECT n FROM jobledger_trace WHERE id = 1`)
	}
}

func (st *traceStamp) scanSeen(br pgx.BatchResults) error {
	if st == nil {
		return nil
	}
	if err := br.QueryRow().Scan(&st.seen); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

func (st *traceStamp) scan(br pgx.BatchResults) error {
	if st == nil {
		return nil
	}
	var rows string
	if err := br.QueryRow().Scan(&st.n); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if err := br.QueryRow().Scan(&st.depth, &rows); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return st.parse(rows)
}

// traceTx ends transaction tx with the trace's statements, if a log is on.
func traceTx(ctx context.Context, tx pgx.Tx) (*traceStamp, error) {
	if !tracer.on.Load() {
		return nil, nil
	}
	st := &traceStamp{}
	var rows string
	if err := tx.QueryRow(ctx, qTraceCount).Scan(&st.n); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := tx.QueryRow(ctx, qTraceRows).Scan(&st.depth, &rows); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return st, st.parse(rows)
}

func (st *traceStamp) parse(rows string) error {
	var rs []struct {
		J  string  `json:"j"`
		St int16   `json:"st"`
		O  *string `json:"o"`
		E  *int64  `json:"e"`
	}
	if err := json.Unmarshal([]byte(rows), &rs); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	for _, r := range rs {
		row := traceRow{J: r.J, St: ledger.State(r.St).String()}
		if row.St == ledger.Running.String() {
			row.E = r.E
			if r.O != nil {
				row.O = *r.O
			}
		}
		st.rows = append(st.rows, row)
	}
	return nil
}

func (s *Store) traceLog(st *traceStamp, e traceEvent) {
	if st == nil || !tracer.on.Load() {
		return
	}
	e.R, e.N, e.D, e.Rows, e.key = s.opts.Replica, st.n, &st.depth, st.rows, 2*st.n
	tracer.mu.Lock()
	tracer.events = append(tracer.events, e)
	tracer.mu.Unlock()
}

// traceBatch logs the batch ops, committed with replies.
func (s *Store) traceBatch(st *traceStamp, ops []*op, replies []reply) {
	if st == nil {
		return
	}
	e := traceEvent{A: "Batch"}
	workers := 0
	for i, o := range ops {
		e.Now = o.now
		r := replies[i]
		switch o.kind {
		case opSubmit:
			e.Sub++
			if r.err == nil && !r.replayed && !r.dup {
				e.New = append(e.New, r.id)
			}
		case opEnd:
			workers++
			e.W, e.J, e.To, e.Er = "end", o.id, o.state.String(), "ok"
			if !r.ended {
				e.Er = "ErrTerminal"
			}
		case opClaim:
			workers++
			e.W, e.J, e.Seen = "claim", r.snap.ID, &st.seen
			if errors.Is(r.err, ledger.ErrNoWork) {
				e.J = ""
			}
		}
	}
	if workers > 1 {
		e.W = "many" // one worker per replica is all the spec has: the checker refuses it
	}
	s.traceLog(st, e)
}

// traceReaped logs a reaper's round that ended ids at now.
func (s *Store) traceReaped(st *traceStamp, ids []string, now *int64) {
	if len(ids) > 0 {
		s.traceLog(st, traceEvent{A: "Reap", Now: now, Jobs: ids})
	}
}

// traceOpened logs Open's restart at now, which failed the RUNNING jobs
// ids.
func (s *Store) traceOpened(st *traceStamp, ids []string, now *int64) {
	s.traceLog(st, traceEvent{A: "Open", Now: now, Jobs: ids})
}

// traceClosed logs Close, once the store's writer, keeper and listener
// stopped, after every commit so far.
func (s *Store) traceClosed() {
	if !tracer.on.Load() {
		return
	}
	var n int64
	if err := s.pool.QueryRow(context.Background(), `SELECT n FROM jobledger_trace WHERE id = 1`).Scan(&n); err != nil {
		n = -1 // the checker refuses a Close out of place
	}
	tracer.mu.Lock()
	tracer.events = append(tracer.events, traceEvent{A: "Close", R: s.opts.Replica, N: n, key: 2*n + 1})
	tracer.mu.Unlock()
}
