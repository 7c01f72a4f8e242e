package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// ListQuery selects a page of List. The zero value asks for the newest
// jobs in any state, as many as the server's default page (20).
type ListQuery struct {
	State  State  // only jobs in this state; "" for any
	TaskID string // only jobs submitted with this task id; "" for any, unless ByTaskID
	// ByTaskID asks for the filter even when TaskID is "": the jobs
	// submitted without a task id.
	ByTaskID bool
	Limit    int    // the most jobs on the page; 0 for the server's default, above 100 it is 100
	Cursor   string // Page.NextCursor of the previous page; "" for the first

	_ struct{} // forbid positional literals
}

// List is GET /jobs: a page of the retained jobs, newest first by
// admission. A walk of pages (each with the last page's NextCursor) lists
// no job twice and every job retained throughout it. A bad parameter is an
// *Error with status 400.
func (c *Client) List(ctx context.Context, q ListQuery) (Page, error) {
	v := url.Values{}
	if q.State != "" {
		v.Set("state", string(q.State))
	}
	if q.TaskID != "" || q.ByTaskID {
		v.Set("task_id", q.TaskID)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var p Page
	_, err := c.call(ctx, http.MethodGet, c.route(v, "jobs"), nil, http.StatusOK, &p, otherErrors)
	return p, err
}
