package httpstress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/linearizability"
)

// HTTPClient records the operations one client issues through the HTTP API,
// sending each through a client.Client. Each call maps the reply's status
// to an Outcome: 202 and 200 are OK, 429 QueueFull, 404 NotFound, 409
// NotDone for a result and Terminal for a cancel (the sentinels the client
// returns for them). A call that could not connect is dropped from the
// history (it was never sent), but a keyed submit; any other transport
// error or status leaves the operation pending forever (its effect is
// unknown). Both are returned as errors.
type HTTPClient struct {
	c   *stress.Client
	rec *stress.Recorder // c's, for the clock and the walks
	api *client.Client
}

// NewHTTPClient returns a new recording client of rec that sends its
// requests through api. Many may share one api.
func NewHTTPClient(rec *stress.Recorder, api *client.Client) *HTTPClient {
	return &HTTPClient{c: rec.Client(nil), rec: rec, api: api}
}

// ID returns the client's id in the history.
func (h *HTTPClient) ID() int { return h.c.ID() }

// end records the return of operation i with out, or drops the operation
// when err shows that its request was never sent (no connection could be
// made): it had no effect, so it is no operation of the history.
func (h *HTTPClient) end(i int, out linearizability.Output, err error) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		h.c.Drop(i)
		return
	}
	h.c.End(i, out)
}

// Submit records POST /jobs with the given task id and params (a compact
// JSON object).
func (h *HTTPClient) Submit(ctx context.Context, taskID, params string) (string, linearizability.Outcome, error) {
	body, err := json.Marshal(client.Request{TaskID: taskID, Params: json.RawMessage(params)})
	if err != nil {
		return "", linearizability.Unknown, err
	}
	i := h.c.Begin(linearizability.Input{Kind: linearizability.Submit, TaskID: taskID, Value: params})
	out, err := submitOutput(h.api.SubmitJSON(ctx, body))
	h.end(i, out, err)
	return out.ID, out.Outcome, err
}

// submitOutput is the recorded output of a POST /jobs that answered acc,
// err: OK with the job's id for a 202, QueueFull for a 429, KeyConflict
// for a 422 of a keyed submit (the last two are answers, not errors), and
// Unknown with err for anything else.
func submitOutput(acc client.Accepted, err error) (linearizability.Output, error) {
	var out linearizability.Output
	switch {
	case err == nil:
		out = linearizability.Output{Outcome: linearizability.OK, ID: acc.JobID}
	case errors.Is(err, client.ErrQueueFull):
		out.Outcome, err = linearizability.QueueFull, nil
	case errors.Is(err, client.ErrKeyConflict):
		out.Outcome, err = linearizability.KeyConflict, nil
	}
	return out, err
}

// SubmitKeyed records POST /jobs with the Idempotency-Key key, as a
// SubmitKeyed operation with the key and a digest of the body: a 202 is OK
// with the job's id (a creation or a replay, which look the same), a 429
// QueueFull, a 422 KeyConflict. The body is encoded as the client encodes
// it, so equal task ids and params are equal bodies, byte for byte, as the
// server compares them.
func (h *HTTPClient) SubmitKeyed(ctx context.Context, key, taskID, params string) (string, linearizability.Outcome, error) {
	req := client.Request{TaskID: taskID, Params: json.RawMessage(params)}
	body, err := json.Marshal(req)
	if err != nil {
		return "", linearizability.Unknown, err
	}
	sum := sha256.Sum256(body)
	i := h.c.Begin(linearizability.Input{
		Kind: linearizability.SubmitKeyed, TaskID: taskID, Value: params, Key: key, Digest: hex.EncodeToString(sum[:8]),
	})
	out, err := submitOutput(h.api.SubmitKeyed(ctx, key, req))
	// Never dropped: net/http sends a request with an Idempotency-Key again
	// on a new connection when the first one broke, so a failed dial may
	// follow a request the server received.
	h.c.End(i, out)
	return out.ID, out.Outcome, err
}

// SubmitWait records POST /jobs with Prefer: wait=N, N being wait in
// whole seconds. A 200 is OK, with the terminal snapshot or, DONE, the
// result (kept compacted); a 202 is Deadline: the job had not ended when
// the server's wait ran out. Waited is the wait the server applied
// (Preference-Applied). The call is not narrowed: the admission happened
// from the call on; the checker places the wait's read itself
// (linearizability's submitwait.go).
func (h *HTTPClient) SubmitWait(ctx context.Context, taskID, params string, wait time.Duration) (string, linearizability.Output, error) {
	req := client.Request{TaskID: taskID, Params: json.RawMessage(params)}
	i := h.c.Begin(linearizability.Input{Kind: linearizability.SubmitWait, TaskID: taskID, Value: params})
	res, err := h.api.SubmitWait(ctx, req, wait)
	var out linearizability.Output
	switch {
	case err == nil:
		out, err = submitWaitOutput(res)
	case errors.Is(err, client.ErrQueueFull):
		out.Outcome, err = linearizability.QueueFull, nil
	}
	if err != nil {
		out = linearizability.Output{}
	}
	h.end(i, out, err)
	return out.ID, out, err
}

// submitWaitOutput reads SubmitWait's answer.
func submitWaitOutput(res client.Outcome) (linearizability.Output, error) {
	var out linearizability.Output
	var err error
	switch {
	case res.Result != nil:
		out, err = resultOutput(*res.Result)
	case res.Snapshot != nil:
		out, err = snapshotOutput(*res.Snapshot, nil)
	default:
		out.Outcome = linearizability.Deadline
	}
	out.ID, out.Waited = res.JobID, int64(res.Applied)
	return out, err
}

// Snapshot records GET /jobs/{id}.
func (h *HTTPClient) Snapshot(ctx context.Context, id string) (linearizability.Output, error) {
	i := h.c.Begin(linearizability.Input{Kind: linearizability.Snapshot, ID: id})
	snap, err := h.api.Snapshot(ctx, id)
	out, err := snapshotOutput(snap, err)
	h.end(i, out, err)
	return out, err
}

// Wait records GET /jobs/{id}/wait?timeout=N. A non-terminal reply came on
// the server's own timeout, which started no earlier than the call: it is
// recorded as a read between call+timeout and the return, with outcome
// Deadline.
func (h *HTTPClient) Wait(ctx context.Context, id string, timeout time.Duration) (linearizability.Output, error) {
	i := h.c.Begin(linearizability.Input{Kind: linearizability.Wait, ID: id})
	call := h.c.CallOf(i)
	snap, err := h.api.Wait(ctx, id, timeout)
	out, err := snapshotOutput(snap, err)
	if out.Outcome == linearizability.OK && !out.State.Terminal() {
		out.Outcome = linearizability.Deadline
	}
	h.end(i, out, err)
	if out.Outcome == linearizability.Deadline {
		h.c.Narrow(i, call+int64(timeout))
	}
	return out, err
}

// Cancel records POST /jobs/{id}/cancel.
func (h *HTTPClient) Cancel(ctx context.Context, id string) (linearizability.Output, error) {
	i := h.c.Begin(linearizability.Input{Kind: linearizability.Cancel, ID: id})
	snap, err := h.api.Cancel(ctx, id)
	out, err := snapshotOutput(snap, err)
	h.end(i, out, err)
	return out, err
}

// Result records GET /jobs/{id}/result. The result is kept compacted.
func (h *HTTPClient) Result(ctx context.Context, id string) (linearizability.Output, error) {
	i := h.c.Begin(linearizability.Input{Kind: linearizability.Result, ID: id})
	res, err := h.api.Result(ctx, id)
	var out linearizability.Output
	if err != nil {
		out, err = refusal(err)
	} else {
		out, err = resultOutput(res)
	}
	if err != nil {
		out = linearizability.Output{}
	}
	h.end(i, out, err)
	return out, err
}

// resultOutput reads a result body (GET /jobs/{id}/result, or a waiting
// submit's 200 for a DONE job), the result compacted.
func resultOutput(res client.Result) (linearizability.Output, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, res.Result); err != nil {
		return linearizability.Output{}, err
	}
	return withState(linearizability.Output{Outcome: linearizability.OK, TaskID: res.TaskID, Value: buf.String()}, string(res.State))
}

// snapshotOutput reads a reply whose 200 body is a job (snapshot, wait,
// cancel); err, when not nil, is the client's error for the call.
func snapshotOutput(s client.Snapshot, err error) (linearizability.Output, error) {
	if err != nil {
		return refusal(err)
	}
	return withState(linearizability.Output{
		Outcome: linearizability.OK, TaskID: s.TaskID, Err: s.Error,
		Started: !s.StartedAt.IsZero(), Completed: !s.CompletedAt.IsZero(), Expires: !s.ExpiresAt.IsZero(),
	}, string(s.State))
}

// refusal maps the client's error for a job's route to its outcome: 404
// NotFound; a 409 NotDone (result) or Terminal (cancel), with the state its
// problem names. Anything else is Unknown, and returned as the error.
func refusal(err error) (linearizability.Output, error) {
	var e *client.Error
	switch {
	case errors.Is(err, client.ErrNotFound):
		return linearizability.Output{Outcome: linearizability.NotFound}, nil
	case errors.Is(err, client.ErrNotDone) && errors.As(err, &e):
		return withState(linearizability.Output{Outcome: linearizability.NotDone}, string(e.State))
	case errors.Is(err, client.ErrTerminal) && errors.As(err, &e):
		return withState(linearizability.Output{Outcome: linearizability.Terminal}, string(e.State))
	}
	return linearizability.Output{}, err
}

func withState(out linearizability.Output, state string) (linearizability.Output, error) {
	st, ok := linearizability.ParseState(state)
	if !ok {
		return linearizability.Output{}, fmt.Errorf("unknown state %q", state)
	}
	out.State = st
	return out, nil
}
