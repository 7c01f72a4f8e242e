package jobapi_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
)

// cutBody is a request body that gives part of a request and then fails
// every read with err, as a connection's body does when the http.Server's
// ReadTimeout passes while it is still arriving.
type cutBody struct {
	r   io.Reader
	err error
}

func (b *cutBody) Read(p []byte) (int, error) {
	if n, _ := b.r.Read(p); n > 0 {
		return n, nil
	}
	return 0, b.err
}

func (b *cutBody) Close() error { return nil }

// TestBodyTimeoutIs408 pins the bug where a body cut off by read_timeout
// was answered 400 "body is not valid JSON", which tells the client not to
// retry a request that may be valid: a body that did not arrive in time is
// 408, with Connection: close, on every route that reads one. A body that
// broke off otherwise is still 400.
func TestBodyTimeoutIs408(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	deadline := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name, path, key string
		length          int64
		err             error
		status          int
		detail          string
	}{
		{"submit", "/jobs", "", 100, deadline, http.StatusRequestTimeout, "body did not arrive in time"},
		{"submit chunked", "/jobs", "", -1, deadline, http.StatusRequestTimeout, "body did not arrive in time"},
		{"keyed submit", "/jobs", "k1", 100, deadline, http.StatusRequestTimeout, "body did not arrive in time"},
		{"keyed submit chunked", "/jobs", "k2", -1, deadline, http.StatusRequestTimeout, "body did not arrive in time"},
		{"infer", "/infer", "", 100, deadline, http.StatusRequestTimeout, "body did not arrive in time"},
		{"infer bare deadline", "/infer", "", -1, os.ErrDeadlineExceeded, http.StatusRequestTimeout, "body did not arrive in time"},
		{"broken off", "/jobs", "", 100, io.ErrUnexpectedEOF, http.StatusBadRequest, "body is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tc.path, nil)
			req.Body = &cutBody{r: strings.NewReader(`{"task_id":"t","params":{`), err: tc.err}
			req.ContentLength = tc.length
			req.Header.Set("Content-Type", "application/json")
			if tc.key != "" {
				req.Header.Set("Idempotency-Key", tc.key)
			}
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, req)
			r := reply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
			require.NoError(t, json.Unmarshal(r.Raw, &r.Body), "%s", r.Raw)
			requireProblem(t, r, tc.status, tc.detail)
			if tc.status == http.StatusRequestTimeout {
				require.Equal(t, "close", r.Header.Get("Connection"), "a 408 closes the connection")
			}
		})
	}
	page, err := h.api.List(t.Context(), client.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Jobs, "no job was admitted")
}
