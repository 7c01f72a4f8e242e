package linearizability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jobledger/jobledger/jobtable"
)

// HTTPClient records the operations one client issues through the HTTP API
// of a server at base (http://host:port). Each call maps the reply's status
// to an Outcome: 202 and 200 are OK, 429 QueueFull, 404 NotFound, 409
// NotDone for a result and Terminal for a cancel. A transport error, or any
// other status, leaves the operation pending forever (its effect is
// unknown) and is returned as an error.
type HTTPClient struct {
	c    *Client
	hc   *http.Client
	base string
}

// HTTPClient returns a new recording client of the server at base, sending
// its requests through hc.
func (r *Recorder) HTTPClient(hc *http.Client, base string) *HTTPClient {
	return &HTTPClient{c: r.Client(nil), hc: hc, base: base}
}

// ID returns the client's id in the history.
func (h *HTTPClient) ID() int { return h.c.ID() }

// wireSnapshot is a job as the API returns it; wireProblem the members of a
// problem reply that the checks read; wireResult a result.
type wireSnapshot struct {
	JobID       string    `json:"job_id"`
	TaskID      string    `json:"task_id"`
	State       string    `json:"state"`
	Error       string    `json:"error"`
	StartedAt   time.Time `json:"started_at"`
	CompletedAt time.Time `json:"completed_at"`
}

type wireProblem struct {
	State string `json:"state"`
}

type wireResult struct {
	TaskID string          `json:"task_id"`
	State  string          `json:"state"`
	Result json.RawMessage `json:"result"`
}

// errStatus is an unexpected reply.
type errStatus struct {
	status int
	body   string
}

func (e errStatus) Error() string { return fmt.Sprintf("unexpected status %d: %s", e.status, e.body) }

// do sends one request and returns the status and the body.
func (h *HTTPClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

// Submit records POST /jobs with the given task id and params (a compact
// JSON object).
func (h *HTTPClient) Submit(ctx context.Context, taskID, params string) (string, Outcome, error) {
	body, err := json.Marshal(map[string]any{"task_id": taskID, "params": json.RawMessage(params)})
	if err != nil {
		return "", Unknown, err
	}
	i := h.c.begin(Input{Kind: Submit, TaskID: taskID, Value: params})
	status, data, err := h.do(ctx, http.MethodPost, "/jobs", body)
	var out Output
	if err == nil {
		switch status {
		case http.StatusAccepted:
			var a struct {
				JobID string `json:"job_id"`
			}
			if err = json.Unmarshal(data, &a); err == nil && a.JobID != "" {
				out = Output{Outcome: OK, ID: a.JobID}
			}
		case http.StatusTooManyRequests:
			out.Outcome = QueueFull
		default:
			err = errStatus{status, string(data)}
		}
	}
	h.c.end(i, out)
	return out.ID, out.Outcome, err
}

// Snapshot records GET /jobs/{id}.
func (h *HTTPClient) Snapshot(ctx context.Context, id string) (Output, error) {
	i := h.c.begin(Input{Kind: Snapshot, ID: id})
	status, data, err := h.do(ctx, http.MethodGet, "/jobs/"+id, nil)
	out, err := h.snapshotReply(status, data, err, OK)
	h.c.end(i, out)
	return out, err
}

// Wait records GET /jobs/{id}/wait?timeout=N. A non-terminal reply came on
// the server's own timeout, which started no earlier than the call: it is
// recorded as a read between call+timeout and the return, with outcome
// Deadline.
func (h *HTTPClient) Wait(ctx context.Context, id string, timeout time.Duration) (Output, error) {
	i := h.c.begin(Input{Kind: Wait, ID: id})
	call := h.c.callOf(i)
	status, data, err := h.do(ctx, http.MethodGet, "/jobs/"+id+"/wait?timeout="+strconv.FormatInt(timeout.Milliseconds(), 10), nil)
	out, err := h.snapshotReply(status, data, err, OK)
	if out.Outcome == OK && !out.State.Terminal() {
		out.Outcome = Deadline
	}
	h.c.end(i, out)
	if out.Outcome == Deadline {
		h.c.narrow(i, call+int64(timeout))
	}
	return out, err
}

// Cancel records POST /jobs/{id}/cancel.
func (h *HTTPClient) Cancel(ctx context.Context, id string) (Output, error) {
	i := h.c.begin(Input{Kind: Cancel, ID: id})
	status, data, err := h.do(ctx, http.MethodPost, "/jobs/"+id+"/cancel", nil)
	out, err := h.snapshotReply(status, data, err, Terminal)
	h.c.end(i, out)
	return out, err
}

// Result records GET /jobs/{id}/result. The result is kept compacted.
func (h *HTTPClient) Result(ctx context.Context, id string) (Output, error) {
	i := h.c.begin(Input{Kind: Result, ID: id})
	status, data, err := h.do(ctx, http.MethodGet, "/jobs/"+id+"/result", nil)
	var out Output
	if err == nil {
		switch status {
		case http.StatusOK:
			var r wireResult
			var buf bytes.Buffer
			if err = json.Unmarshal(data, &r); err == nil {
				if err = json.Compact(&buf, r.Result); err == nil {
					out, err = withState(Output{Outcome: OK, TaskID: r.TaskID, Value: buf.String()}, r.State)
				}
			}
		case http.StatusConflict:
			var p wireProblem
			if err = json.Unmarshal(data, &p); err == nil {
				out, err = withState(Output{Outcome: NotDone}, p.State)
			}
		case http.StatusNotFound:
			out.Outcome = NotFound
		default:
			err = errStatus{status, string(data)}
		}
	}
	if err != nil {
		out = Output{}
	}
	h.c.end(i, out)
	return out, err
}

// snapshotReply reads a reply whose 200 body is a job; conflict is the
// outcome of a 409 (whose problem carries only the state).
func (h *HTTPClient) snapshotReply(status int, data []byte, err error, conflict Outcome) (Output, error) {
	if err != nil {
		return Output{}, err
	}
	var out Output
	switch status {
	case http.StatusOK:
		var s wireSnapshot
		if err = json.Unmarshal(data, &s); err == nil {
			out, err = withState(Output{
				Outcome: OK, TaskID: s.TaskID, Err: s.Error,
				Started: !s.StartedAt.IsZero(), Completed: !s.CompletedAt.IsZero(),
			}, s.State)
		}
	case http.StatusConflict:
		if conflict == OK {
			return Output{}, errStatus{status, string(data)}
		}
		var p wireProblem
		if err = json.Unmarshal(data, &p); err == nil {
			out, err = withState(Output{Outcome: conflict}, p.State)
		}
	case http.StatusNotFound:
		out.Outcome = NotFound
	default:
		err = errStatus{status, string(data)}
	}
	if err != nil {
		return Output{}, err
	}
	return out, nil
}

func withState(out Output, state string) (Output, error) {
	st, ok := jobtable.ParseState(state)
	if !ok {
		return Output{}, fmt.Errorf("unknown state %q", state)
	}
	out.State = st
	return out, nil
}
