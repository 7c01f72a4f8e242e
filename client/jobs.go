package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/jobledger/jobledger/wire"
)

// Submit is POST /jobs: it admits a job and returns its id at once, with
// the job PENDING. A full queue is an *Error that unwraps to ErrQueueFull
// and carries the server's Retry-After.
func (c *Client) Submit(ctx context.Context, req Request) (Accepted, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Accepted{}, fmt.Errorf("client: encoding the request: %w", err)
	}
	return c.SubmitJSON(ctx, body)
}

// SubmitJSON is Submit with the body already encoded, for a caller that
// sends one body many times (a load generator).
func (c *Client) SubmitJSON(ctx context.Context, body []byte) (Accepted, error) {
	return c.submit(ctx, body)
}

// SubmitKeyed is Submit under the Idempotency-Key key (1 to 255 printable
// ASCII characters): while the job it created is retained, sending the
// same key and request again answers that job, as the first call did, and
// runs nothing; so a call whose outcome is unknown (a transport error, a
// 503) can be retried safely. The same key with another request is an
// *Error that unwraps to ErrKeyConflict. The request is encoded as Submit
// encodes it, the same bytes for the same Request, which the server
// compares byte for byte.
func (c *Client) SubmitKeyed(ctx context.Context, key string, req Request) (Accepted, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Accepted{}, fmt.Errorf("client: encoding the request: %w", err)
	}
	acc, err := c.submit(ctx, body, [2]string{"Idempotency-Key", key})
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusUnprocessableEntity && e.Detail == wire.DetailKeyConflict {
		e.sentinel = ErrKeyConflict
	}
	return acc, err
}

// submit is POST /jobs of body with the header fields hdr.
func (c *Client) submit(ctx context.Context, body []byte, hdr ...[2]string) (Accepted, error) {
	r, err := c.do(ctx, http.MethodPost, c.route(nil, "jobs"), body, hdr...)
	if err != nil {
		return Accepted{}, err
	}
	if r.status != http.StatusAccepted {
		return Accepted{}, newError(r, submitErrors[r.status])
	}
	var acc Accepted
	if err := json.Unmarshal(r.body, &acc); err != nil {
		return Accepted{}, fmt.Errorf("client: POST %s: %d reply: %w", r.url, r.status, err)
	}
	if acc.JobID == "" {
		return Accepted{}, fmt.Errorf("client: POST %s: 202 reply without a job_id", r.url)
	}
	if loc := r.header.Get("Location"); loc != "" {
		if acc.Location, err = r.url.Parse(loc); err != nil {
			return Accepted{}, fmt.Errorf("client: POST %s: Location: %w", r.url, err)
		}
	}
	return acc, nil
}

// Snapshot is GET /jobs/{id}.
func (c *Client) Snapshot(ctx context.Context, id string) (Snapshot, error) {
	var s Snapshot
	_, err := c.call(ctx, http.MethodGet, c.jobRoute(id, "", nil), nil, http.StatusOK, &s, jobErrors)
	return s, err
}

// Wait is GET /jobs/{id}/wait?timeout=N: the job's snapshot as soon as it
// is terminal, or once timeout (whole milliseconds, at most the server's
// max_wait) has passed, when its State is still PENDING or RUNNING. A
// negative timeout sends none, leaving the server's max_wait. A job evicted
// during the wait still yields its final snapshot.
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (Snapshot, error) {
	var q url.Values
	if timeout >= 0 {
		q = url.Values{"timeout": {millis(timeout)}}
	}
	var s Snapshot
	_, err := c.call(ctx, http.MethodGet, c.jobRoute(id, "wait", q), nil, http.StatusOK, &s, jobErrors)
	return s, err
}

// Result is GET /jobs/{id}/result. A job that is not DONE is an *Error
// that unwraps to ErrNotDone, whose State says where the job stands.
func (c *Client) Result(ctx context.Context, id string) (Result, error) {
	var res Result
	_, err := c.call(ctx, http.MethodGet, c.jobRoute(id, "result", nil), nil, http.StatusOK, &res, resultErrors)
	return res, err
}

// Cancel is POST /jobs/{id}/cancel: a PENDING or RUNNING job ends FAILED
// with error "canceled", and Cancel returns the snapshot that transition
// produced. A job already ended is an *Error that unwraps to ErrTerminal,
// whose State names the state it ended in.
func (c *Client) Cancel(ctx context.Context, id string) (Snapshot, error) {
	var s Snapshot
	_, err := c.call(ctx, http.MethodPost, c.jobRoute(id, "cancel", nil), nil, http.StatusOK, &s, cancelErrors)
	return s, err
}
