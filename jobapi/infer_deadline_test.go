package jobapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// events is an ordered log shared by a request body and its
// ResponseWriter.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}

// loggedBody logs "body read" when its reader reaches the end.
type loggedBody struct {
	io.Reader
	ev *events
}

func (b loggedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF {
		b.ev.add("body read")
	}
	return n, err
}

// deadlineRecorder is a ResponseWriter that logs every write deadline set
// on it, as http.ResponseController sets one on a connection.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	ev *events
}

func (d deadlineRecorder) SetWriteDeadline(time.Time) error {
	d.ev.add("write deadline")
	return nil
}

// TestInferWriteDeadlineAfterBody pins a defect: /infer's write deadline,
// WriteTimeout plus async_timeout, was set before its body was read, while
// its deadline counts from the end of the parsing; an upload slower than
// the WriteTimeout (no ReadTimeout, or a longer one) had the reply cut off.
// The held deadline is now set once the body has been read and parsed.
func TestInferWriteDeadlineAfterBody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) { c.Model = "echo" })
	hs := &http.Server{WriteTimeout: time.Second}
	ev := &events{}
	req := httptest.NewRequestWithContext(
		context.WithValue(context.Background(), http.ServerContextKey, hs),
		http.MethodPost, "/infer", loggedBody{strings.NewReader(`{"task_id":"slow upload"}`), ev})
	req.Header.Set("Content-Type", "application/json")
	rec := deadlineRecorder{httptest.NewRecorder(), ev}
	h.srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	log := ev.list()
	require.Contains(t, log, "body read")
	require.Equal(t, "write deadline", log[len(log)-1], "the held write deadline is set after the body was read: %v", log)
}
