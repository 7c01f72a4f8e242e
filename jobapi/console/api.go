package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/jobledger/jobledger/wire"
)

// maxAPIReply bounds the reply of one in-process API call that the console
// keeps: a result larger than this is shown cut short.
const maxAPIReply = 1 << 20

// apiReply is what the API answered to one in-process call.
type apiReply struct {
	status int
	body   []byte
	cut    bool // the body was longer than maxAPIReply
}

// call sends method and target (a path and query of the API) to the API
// as the caller of r: the same context, so that what a middleware put in
// it holds, and the same headers, so that the caller's credentials go
// with it; never r's body.
func (c *Console) call(r *http.Request, method, target string) (apiReply, error) {
	u, err := url.Parse(target)
	if err != nil {
		return apiReply{}, err
	}
	sub := r.Clone(r.Context())
	sub.Method = method
	sub.URL = u
	sub.RequestURI = u.RequestURI()
	sub.Body, sub.ContentLength, sub.GetBody = http.NoBody, 0, nil
	sub.TransferEncoding = nil
	sub.Header.Del("Content-Type")
	sub.Header.Del("Content-Length")
	sub.Header.Del("Prefer")
	sub.Header.Del("Idempotency-Key")
	rec := &recorder{header: http.Header{}}
	c.opts.API.ServeHTTP(rec, sub)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return apiReply{status: rec.status, body: rec.body.Bytes(), cut: rec.cut}, nil
}

// getJSON calls GET target and decodes a 200's body into v; any other
// status is an *apiError.
func (c *Console) getJSON(r *http.Request, target string, v any) error {
	rep, err := c.call(r, http.MethodGet, target)
	if err != nil {
		return err
	}
	if rep.status != http.StatusOK {
		return newAPIError(rep)
	}
	if rep.cut {
		return fmt.Errorf("console: the reply to GET %s is over %d bytes", target, maxAPIReply)
	}
	return json.Unmarshal(rep.body, v)
}

// apiError is an answer of the API other than the one the console asked
// for: its status and problem detail.
type apiError struct {
	status int
	detail string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("the job API answered %d %s: %s", e.status, http.StatusText(e.status), e.detail)
}

func newAPIError(rep apiReply) *apiError {
	var p wire.Problem
	_ = json.Unmarshal(rep.body, &p) // not a problem body: no detail
	return &apiError{status: rep.status, detail: p.Detail}
}

// recorder is the ResponseWriter of an in-process call: it keeps the
// status and up to maxAPIReply bytes of the body.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	cut    bool
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	room := maxAPIReply - w.body.Len()
	if len(b) > room {
		w.body.Write(b[:max(room, 0)])
		w.cut = true
		return len(b), nil
	}
	return w.body.Write(b)
}

var _ io.Writer = (*recorder)(nil)
