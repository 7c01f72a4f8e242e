// Package client is the Go client of the job API that package jobapi
// serves (docs/http.md, docs/openapi.yaml). The load generator, the HTTP
// stress harness and tests all speak to the server through it.
//
// A Client is safe for concurrent use. Every method takes a context first,
// sends one request and reads the whole reply; none retries.
//
// # Usage
//
//	c, err := client.New("http://127.0.0.1:8080", client.Options{})
//	acc, err := c.Submit(ctx, client.Request{TaskID: "t1", Image: png})
//	switch {
//	case errors.Is(err, client.ErrQueueFull): // 429: retry after err's RetryAfter
//	case err != nil: ...
//	}
//	snap, err := c.Wait(ctx, acc.JobID, 5*time.Second) // until terminal, or 5 s
//	if snap.State == client.Done {
//		res, err := c.Result(ctx, acc.JobID)
//	}
//
//	// or submit and wait in one request (Prefer: wait=10)
//	out, err := c.SubmitWait(ctx, client.Request{TaskID: "t2"}, 10*time.Second)
//	if out.Ended() { ... } // out.Result when DONE, out.Snapshot when FAILED or TIMEOUT
//
//	// the finished jobs, newest first, a page at a time
//	q := client.ListQuery{State: client.Done, Limit: 50}
//	for {
//		page, err := c.List(ctx, q)
//		... page.Jobs ...
//		if page.NextCursor == "" { break }
//		q.Cursor = page.NextCursor
//	}
//
// # Errors
//
// A reply other than the route's success is an *Error, which carries the
// status, Retry-After and the members of the RFC 9457 problem the server
// sent. It unwraps to the sentinel that the status means on that route:
// ErrQueueFull (429 on POST /jobs), ErrNotFound (404 on a job's routes),
// ErrNotDone (409 on a result), ErrTerminal (409 on a cancel),
// ErrKeyConflict (SubmitKeyed's 422: the key was used for another request),
// ErrUnavailable (503 anywhere), and ErrUnauthorized and ErrForbidden (401
// and 403 anywhere, from a server with a token file: see Options.Token). A transport error is returned as the
// *http.Client returned it (a *url.Error); the caller cannot tell whether
// the server acted on the request.
//
// # Mounted under a prefix
//
// The base URL may carry a path: with http://host/api every route is
// resolved below /api/, as when the server is mounted by http.StripPrefix
// or behind a proxy that strips the prefix. The server's Location header is
// a relative reference (jobs/{id}) for that reason; Submit resolves it
// against the request's URL.
package client
