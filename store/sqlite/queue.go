package sqlite

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// opKind is what a write does.
type opKind uint8

const (
	opSubmit opKind = iota
	opStart
	opFinish
	opFail
	opTimeout
)

// terminalState is the state the terminal write k ends a job in.
func (k opKind) terminalState() ledger.State {
	switch k {
	case opFinish:
		return ledgertype.Done
	case opFail:
		return ledgertype.Failed
	case opTimeout:
		return ledgertype.TimedOut
	}
	panic("sqlite: not a terminal write")
}

// op is one write, queued by its caller for the writer goroutine. The
// caller fills it and then only reads reply; the writer reads the rest and
// sends one reply.
type op struct {
	ctx     context.Context
	kind    opKind
	id      string
	taskID  string  // Submit
	key     string  // the idempotency key; "" for none
	digest  string  // the request's digest, under key
	payload []byte  // Submit's request, Finish's result: the store's copy once queued
	cause   *string // Fail's and Timeout's error message; nil for a nil error
	reply   chan reply
}

// size is the number of bytes o carries, which Options.MaxValueBytes bounds.
func (o *op) size() int {
	n := len(o.id) + len(o.taskID) + len(o.key) + len(o.digest) + len(o.payload)
	if o.cause != nil {
		n += len(*o.cause)
	}
	return n
}

// reply is the outcome of an op.
type reply struct {
	snap ledger.Snapshot
	err  error
	// replayed: a keyed Submit answered with the job that holds its key,
	// creating nothing.
	replayed bool
	// panicked is a panic to re-raise in the caller's goroutine: one of
	// the injected clock, or a duplicate id from Config.NewID, as
	// jobtable raises them.
	panicked any
}

// answer counts o out of q's backlog and sends r to o's caller, in that
// order, so that a caller holding its reply finds its write counted out.
// The channel has room for one reply, so the writer never blocks on a
// caller that stopped listening.
func (q *queue) answer(o *op, r reply) {
	q.backlog.Add(-1)
	o.reply <- r
}

// queue hands the callers' writes to the writer goroutine.
//
// Synchronisation: mu guards ops and closed. ready has room for one signal
// and is sent to, without blocking, after every push, so a writer that
// found the queue empty and then receives from ready finds the ops pushed
// since. backlog is atomic.
//
// Invariants: once closed, nothing is pushed: every op the queue ever held
// is taken by the writer, which answers it. backlog counts the ops pushed
// and not yet answered: len(ops) plus those of the batch in progress.
type queue struct {
	mu     sync.Mutex
	ops    []*op
	closed bool

	ready   chan struct{}
	backlog atomic.Int64
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// push appends o, or reports false if the queue is closed.
func (q *queue) push(o *op) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.ops = append(q.ops, o)
	q.backlog.Add(1)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default: // a signal is already pending
	}
	return true
}

// take moves up to limit ops, oldest first, into buf and returns it.
func (q *queue) take(limit int, buf []*op) []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(limit, len(q.ops))
	buf = append(buf, q.ops[:n]...)
	clear(q.ops[:n])
	q.ops = q.ops[n:]
	if len(q.ops) == 0 {
		q.ops = nil // let the backing array go once drained
	}
	return buf
}

// close closes the queue and returns the ops still in it.
func (q *queue) close() []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	left := q.ops
	q.ops = nil
	return left
}

// len is the number of ops waiting.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ops)
}
