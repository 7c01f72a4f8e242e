package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Outcome answers SubmitWait: the admitted job, and its outcome when it
// ended within the wait.
type Outcome struct {
	// Accepted is the job's id and Location. Its State is PENDING when the
	// job had not ended within the wait (a 202), else the state it ended in.
	Accepted
	// Applied is the wait the server applied (Preference-Applied), zero
	// when it did not wait: max_wait under a second, or a wait of 0.
	Applied time.Duration
	// Result is set when the job ended DONE within the wait.
	Result *Result
	// Snapshot is set when the job ended FAILED or TIMEOUT within the
	// wait; or DONE, in the rare case that retention evicted the job
	// before the server could read its result.
	Snapshot *Snapshot
}

// Ended reports whether the job ended within the wait.
func (o Outcome) Ended() bool { return o.Result != nil || o.Snapshot != nil }

// SubmitWait is POST /jobs with Prefer: wait=N, N being wait in whole
// seconds (rounded down): the server admits the job and waits up to N
// seconds, at most its max_wait, for it to end. A job that ends in time
// comes back with its Result (DONE) or its terminal Snapshot; one that
// does not comes back as Submit's would, and runs on. Refusals are
// Submit's.
func (c *Client) SubmitWait(ctx context.Context, req Request, wait time.Duration) (Outcome, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Outcome{}, fmt.Errorf("client: encoding the request: %w", err)
	}
	secs := strconv.FormatInt(int64(max(wait, 0)/time.Second), 10)
	r, err := c.do(ctx, http.MethodPost, c.route(nil, "jobs"), body, [2]string{"Prefer", "wait=" + secs})
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	switch r.status {
	case http.StatusAccepted:
		err = json.Unmarshal(r.body, &out.Accepted)
	case http.StatusOK:
		var b struct {
			Snapshot
			Result json.RawMessage `json:"result"`
		}
		if err = json.Unmarshal(r.body, &b); err != nil {
			break
		}
		out.JobID, out.State = b.JobID, b.State
		if b.Result != nil {
			out.Result = &Result{JobID: b.JobID, TaskID: b.TaskID, State: b.State, Result: b.Result}
		} else {
			out.Snapshot = &b.Snapshot
		}
	default:
		return Outcome{}, newError(r, submitErrors[r.status])
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("client: POST %s: %d reply: %w", r.url, r.status, err)
	}
	if out.JobID == "" {
		return Outcome{}, fmt.Errorf("client: POST %s: %d reply without a job_id", r.url, r.status)
	}
	if loc := r.header.Get("Location"); loc != "" {
		if out.Location, err = r.url.Parse(loc); err != nil {
			return Outcome{}, fmt.Errorf("client: POST %s: Location: %w", r.url, err)
		}
	}
	if v, ok := strings.CutPrefix(r.header.Get("Preference-Applied"), "wait="); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			out.Applied = time.Duration(n) * time.Second
		}
	}
	return out, nil
}
