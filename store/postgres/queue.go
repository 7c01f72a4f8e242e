package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// opKind is what a queued write does.
type opKind uint8

const (
	opSubmit opKind = iota
	opEnd
	opClaim
)

// op is one write, queued by its caller for the writer goroutine
// (writer.go). The caller fills it and then only reads reply; the writer
// reads the rest and sends one reply.
type op struct {
	ctx  context.Context
	kind opKind
	now  *int64 // the caller's reading of Config.Now, nil for the database's clock

	id                  string // Submit: the new job's id; an end: the job's
	taskID, key, digest string // Submit; key "" for no idempotency key
	payload             []byte // Submit's request, Finish's result
	state               ledger.State
	msg                 *string // Fail's and Timeout's message

	reply chan reply // room for one, so the writer never blocks
	// fate is opWaiting until the writer answers the op (opAnswered) or
	// its caller gives up on it (opAbandoned), whichever comes first.
	fate atomic.Int32
}

// The fates of an op.
const (
	opWaiting int32 = iota
	opAnswered
	opAbandoned
)

// deliver sends r to o's caller unless the caller gave up on it; before
// sends first, if set (Claim holds its job there, before its caller can
// end it). It reports whether the caller gets r.
func deliver(o *op, r reply, before func()) bool {
	if !o.fate.CompareAndSwap(opWaiting, opAnswered) {
		return false
	}
	if before != nil {
		before()
	}
	o.reply <- r
	return true
}

// size is the number of bytes o sends.
func (o *op) size() int {
	n := len(o.id) + len(o.taskID) + len(o.key) + len(o.digest) + len(o.payload)
	if o.msg != nil {
		n += len(*o.msg)
	}
	return n
}

// reply is the outcome of an op.
type reply struct {
	err error
	// unknown: some try of the op failed with its outcome unknown (it may
	// have committed); only ends are tried again after that.
	unknown bool

	id       string // Submit: the job admitted or replayed
	replayed bool   // a keyed Submit answered with the job holding its key
	dup      bool   // Submit: Config.NewID repeated an id

	snap  ledger.Snapshot // an end's final snapshot, or the job Claim started
	ended bool            // an end made its job terminal

	req    []byte // Claim: the request, when small enough to come inline
	reqLen int    // Claim: the request's length
}

// queue holds the writes waiting for the writer, in the order they came.
type queue struct {
	mu     sync.Mutex // guards ops and closed
	ops    []*op
	closed bool

	ready chan struct{} // room for one signal: ops may be waiting
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// push queues o, or reports false if the queue is closed.
func (q *queue) push(o *op) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.ops = append(q.ops, o)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take removes and returns, in order, the ops of the next batch: at most
// maxOps, and no more than maxBytes unless the first alone is larger. An op
// that would meet an earlier one of the batch on the same job (two ends of
// one id) or the same idempotency key stays queued for a later batch, so
// that each statement of a batch changes a row or claims a key once.
func (q *queue) take(maxOps, maxBytes int) []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch, left []*op
	ends := map[string]bool{}
	keys := map[string]bool{}
	bytes := 0
	for i, o := range q.ops {
		if len(batch) == maxOps || (len(batch) > 0 && bytes+o.size() > maxBytes) {
			left = append(left, q.ops[i:]...)
			break
		}
		switch {
		case o.kind == opEnd && ends[o.id], o.kind == opSubmit && o.key != "" && keys[o.key]:
			left = append(left, o)
			continue
		case o.kind == opEnd:
			ends[o.id] = true
		case o.kind == opSubmit && o.key != "":
			keys[o.key] = true
		}
		batch = append(batch, o)
		bytes += o.size()
	}
	clear(q.ops)
	q.ops = append(q.ops[:0], left...)
	return batch
}

// gather waits until the queue holds at least n ops, for at most d or
// until ctx ends: the callers a batch just answered come back together
// and ride the next batch together, rather than split between two.
func (q *queue) gather(ctx context.Context, n int, d time.Duration) {
	var timer *time.Timer
	for {
		q.mu.Lock()
		enough := len(q.ops) >= n || q.closed
		q.mu.Unlock()
		if enough {
			break
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		}
		select {
		case <-q.ready:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// len is the number of ops queued.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ops)
}

// close closes the queue and returns what it still held.
func (q *queue) close() []*op {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	ops := q.ops
	q.ops = nil
	return ops
}

// await sends o to the writer and waits for its reply: ErrClosed at once
// if the store is closed, ctx.Err() (the outcome unknown) if ctx ends first.
func (s *Store) await(ctx context.Context, o *op) reply {
	o.ctx = ctx
	o.reply = make(chan reply, 1)
	if !s.q.push(o) {
		return reply{err: ledger.ErrClosed}
	}
	select {
	case r := <-o.reply:
		return r
	case <-ctx.Done():
		if o.fate.CompareAndSwap(opWaiting, opAbandoned) {
			return reply{err: ctx.Err(), unknown: true}
		}
		return <-o.reply // answered in the same instant: the reply is on its way
	}
}
