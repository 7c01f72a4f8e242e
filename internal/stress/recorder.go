package stress

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/anishathalye/porcupine"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/linearizability"
)

// Recorder collects one history from many clients. Every operation is
// stamped by one Clock.
type Recorder struct {
	clock   *Clock
	count   atomic.Int64 // operations begun
	discard bool         // count the operations, keep none (Config.Unrecorded)

	mu      sync.Mutex // guards clients and walks
	clients []*Client
	walks   []linearizability.Walk
	// walkViolations: walks that never reached their last page.
	walkViolations []string
}

// NewRecorder returns a Recorder with a fresh Clock.
func NewRecorder() *Recorder { return &Recorder{clock: NewClock()} }

// Clock returns the recorder's clock.
func (r *Recorder) Clock() *Clock { return r.clock }

// Client returns a new recording client of l, with the next client id.
// A Client is used by one goroutine at a time.
func (r *Recorder) Client(l Ledger) *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Client{id: len(r.clients), ledger: l, clock: r.clock, count: &r.count, rec: r}
	r.clients = append(r.clients, c)
	return c
}

// Len returns the number of operations begun so far.
func (r *Recorder) Len() int { return int(r.count.Load()) }

// History returns every operation recorded so far, sorted by call time. An
// operation still in flight is returned pending forever: Return = Pending,
// Outcome Unknown. It is never dropped.
func (r *Recorder) History() []porcupine.Operation {
	r.mu.Lock()
	clients := slices.Clone(r.clients)
	r.mu.Unlock()
	var h []porcupine.Operation
	for _, c := range clients {
		c.mu.Lock()
		h = append(h, c.ops...)
		c.mu.Unlock()
	}
	slices.SortStableFunc(h, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return h
}

// Client records the operations one client issues through a Ledger.
type Client struct {
	id     int
	ledger Ledger
	clock  *Clock
	count  *atomic.Int64
	rec    *Recorder // where its walks go

	mu  sync.Mutex // guards ops; taken briefly, so History can read a live client
	ops []porcupine.Operation
}

// ID returns the client's id in the history.
func (c *Client) ID() int { return c.id }

// Begin appends an operation that has not returned, pending forever until
// End says otherwise, and returns its index. The call stamp is taken last,
// just before the call. A driver that calls something else than a Ledger
// records each call with Begin and End.
func (c *Client) Begin(in linearizability.Input) int {
	c.count.Add(1)
	if c.rec.discard {
		return -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops = append(c.ops, porcupine.Operation{
		ClientId: c.id,
		Input:    in,
		Output:   linearizability.Output{Outcome: linearizability.Unknown},
		Return:   linearizability.Pending,
	})
	i := len(c.ops) - 1
	c.ops[i].Call = c.clock.Now()
	return i
}

// End records the return of operation i. The return stamp is taken first,
// just after the call. An Unknown outcome stays pending forever.
func (c *Client) End(i int, out linearizability.Output) {
	if i < 0 {
		return
	}
	ret := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if out.Outcome == linearizability.Unknown {
		return
	}
	c.ops[i].Output = out
	c.ops[i].Return = ret
}

// Drop removes operation i, the client's latest, from the history: its
// call never reached the ledger. An earlier operation stays as it is.
func (c *Client) Drop(i int) {
	if i < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i == len(c.ops)-1 {
		c.ops = c.ops[:i]
	}
}

// CallOf returns the call time of operation i (zero for a Recorder that
// keeps no history).
func (c *Client) CallOf(i int) int64 {
	if i < 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[i].Call
}

// Narrow moves the call time of operation i forward to at: the operation
// is known to have observed the ledger no earlier than at.
func (c *Client) Narrow(i int, at int64) {
	if i < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	op := &c.ops[i]
	if at > op.Call && at <= op.Return {
		op.Call = at
	}
}

// Submit records l.Submit.
func (c *Client) Submit(ctx context.Context, taskID, req string) (string, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.Submit, TaskID: taskID, Value: req})
	id, err := c.ledger.Submit(ctx, taskID, req)
	out := linearizability.Output{Outcome: outcomeOf(linearizability.Submit, err)}
	if err == nil {
		out.ID = id
	}
	c.End(i, out)
	return id, err
}

// SubmitKeyed records l.SubmitKeyed as a SubmitKeyed operation with its
// key and digest: OK with the job's id, Replayed when the ledger said it
// replayed the job that holds the key; QueueFull; KeyConflict.
func (c *Client) SubmitKeyed(ctx context.Context, key, digest, taskID, req string) (string, bool, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.SubmitKeyed, TaskID: taskID, Value: req, Key: key, Digest: digest})
	id, replayed, err := c.ledger.SubmitKeyed(ctx, key, digest, taskID, req)
	out := linearizability.Output{Outcome: outcomeOf(linearizability.SubmitKeyed, err)}
	if err == nil {
		out.ID, out.Replayed = id, replayed
	}
	c.End(i, out)
	return id, replayed, err
}

// TakeRequest records l.TakeRequest.
func (c *Client) TakeRequest(ctx context.Context, id string) (string, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.TakeRequest, ID: id})
	req, err := c.ledger.TakeRequest(ctx, id)
	out := linearizability.Output{Outcome: outcomeOf(linearizability.TakeRequest, err)}
	if err == nil {
		out.Value = req
	}
	c.End(i, out)
	return req, err
}

// Start records l.Start.
func (c *Client) Start(ctx context.Context, id string) error {
	i := c.Begin(linearizability.Input{Kind: linearizability.Start, ID: id})
	err := c.ledger.Start(ctx, id)
	c.End(i, linearizability.Output{Outcome: outcomeOf(linearizability.Start, err)})
	return err
}

// Finish records l.Finish.
func (c *Client) Finish(ctx context.Context, id, res string) error {
	i := c.Begin(linearizability.Input{Kind: linearizability.Finish, ID: id, Value: res})
	err := c.ledger.Finish(ctx, id, res)
	c.End(i, linearizability.Output{Outcome: outcomeOf(linearizability.Finish, err)})
	return err
}

// Fail records l.Fail.
func (c *Client) Fail(ctx context.Context, id, msg string) error {
	i := c.Begin(linearizability.Input{Kind: linearizability.Fail, ID: id, Value: msg})
	err := c.ledger.Fail(ctx, id, msg)
	c.End(i, linearizability.Output{Outcome: outcomeOf(linearizability.Fail, err)})
	return err
}

// Timeout records l.Timeout.
func (c *Client) Timeout(ctx context.Context, id, msg string) error {
	i := c.Begin(linearizability.Input{Kind: linearizability.Timeout, ID: id, Value: msg})
	err := c.ledger.Timeout(ctx, id, msg)
	c.End(i, linearizability.Output{Outcome: outcomeOf(linearizability.Timeout, err)})
	return err
}

// Snapshot records l.Snapshot.
func (c *Client) Snapshot(ctx context.Context, id string) (jobtable.Snapshot, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.Snapshot, ID: id})
	snap, err := c.ledger.Snapshot(ctx, id)
	c.End(i, outputWithView(linearizability.Snapshot, err, snap))
	return snap, err
}

// State calls l.State unrecorded: the history has no such operation.
func (c *Client) State(ctx context.Context, id string) (ledgertype.State, error) {
	return c.ledger.State(ctx, id)
}

// Result records l.Result.
func (c *Client) Result(ctx context.Context, id string) (string, jobtable.Snapshot, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.Result, ID: id})
	res, snap, err := c.ledger.Result(ctx, id)
	out := outputWithView(linearizability.Result, err, snap)
	if err == nil {
		out.Value = res
	}
	c.End(i, out)
	return res, snap, err
}

// Wait records l.Wait.
//
// A Wait that returns a non-terminal state because its own deadline passed
// observed the job after that deadline: the ledger re-reads the job once
// the deadline fires. Wait records it so, as a read between the deadline
// and its return. A job that ended before the deadline must then be seen
// ended, which makes a lost wakeup (the job ended, the waiter never heard
// and reported the stale state) illegal rather than a lucky early read.
func (c *Client) Wait(ctx context.Context, id string) (jobtable.Snapshot, error) {
	i := c.Begin(linearizability.Input{Kind: linearizability.Wait, ID: id})
	snap, err := c.ledger.Wait(ctx, id)
	out := outputWithView(linearizability.Wait, err, snap)
	c.End(i, out)
	if out.Outcome == linearizability.Deadline && !snap.State.Terminal() && errors.Is(err, context.DeadlineExceeded) {
		if d, ok := ctx.Deadline(); ok {
			c.Narrow(i, c.clock.At(d))
		}
	}
	return snap, err
}
