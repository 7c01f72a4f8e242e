package jobapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// postKeyed posts the raw JSON body with the given Idempotency-Key fields.
func (h *harness) postKeyed(body string, keys ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/jobs", bytes.NewReader([]byte(body)))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		req.Header.Add("Idempotency-Key", k)
	}
	resp, err := h.ts.Client().Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(h.t, json.Unmarshal(raw, &r.Body), "%s", raw)
	}
	return r
}

// TestIdempotencyKeyReplay: a repeat of a submit under its key, with the
// same body, answers as the first did
// (202, the same id and Location), creates nothing and takes no slot, even
// with the queue full, and after the job ended.
func TestIdempotencyKeyReplay(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncMaxQueue = 1 })
	req := client.Request{TaskID: "t", Params: json.RawMessage(`{"a":1}`)}
	first, err := h.api.SubmitKeyed(t.Context(), "key-1", req)
	require.NoError(t, err)
	<-g.started

	again, err := h.api.SubmitKeyed(t.Context(), "key-1", req)
	require.NoError(t, err, "the full queue does not refuse a replay")
	require.Equal(t, first, again, "the same id, state and Location")
	quoted, err := h.api.SubmitKeyed(t.Context(), `"key-1"`, req)
	require.NoError(t, err)
	require.Equal(t, first.JobID, quoted.JobID, "the draft's quoted form is the same key")
	_, err = h.api.SubmitKeyed(t.Context(), "key-2", client.Request{})
	require.ErrorIs(t, err, client.ErrQueueFull, "a new key takes a slot")

	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(first.JobID).State)
	again, err = h.api.SubmitKeyed(t.Context(), "key-1", req)
	require.NoError(t, err)
	require.Equal(t, first, again, "answered as the first was, though the job is DONE")
	select {
	case task := <-g.started:
		t.Fatalf("a replay ran a job: %s", task)
	default:
	}
	require.Equal(t, 1.0, h.metric("jobledger_jobs_submitted_total"))
}

// TestIdempotencyKeyConflict: the key with another body is 422, and
// changes nothing. Bodies are compared byte for byte: the same request
// with other spacing is another body.
func TestIdempotencyKeyConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	first, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "t"})
	require.NoError(t, err)
	for _, req := range []client.Request{{TaskID: "u"}, {TaskID: "t", Params: json.RawMessage(`{}`)}, {}} {
		_, err := h.api.SubmitKeyed(t.Context(), "k", req)
		requireAPIError(t, err, http.StatusUnprocessableEntity, "Idempotency-Key was used for another request")
		require.ErrorIs(t, err, client.ErrKeyConflict)
	}
	for _, body := range []string{`{ "task_id":"t"}`, `{not json`} { // bytes no client sends
		requireProblem(t, h.postKeyed(body, "k"), http.StatusUnprocessableEntity, "Idempotency-Key was used for another request")
	}
	h.waitDone(first.JobID)
	again, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "t"})
	require.NoError(t, err)
	require.Equal(t, first, again)
}

// TestIdempotencyKeyInvalid: a key that is empty, longer than 255
// characters or not printable ASCII, and two keys, are 400 before the
// body is read, and create nothing.
func TestIdempotencyKeyInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	for name, keys := range map[string][]string{
		"empty":        {""},
		"empty quoted": {`""`},
		"too long":     {strings.Repeat("k", 256)},
		"tab":          {"a\tb"},
		"not ASCII":    {"clé"},
		"bad escape":   {`"a\b"`},
		"two":          {"a", "b"},
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, h.postKeyed(`{not json`, keys...), http.StatusBadRequest,
				"Idempotency-Key must be 1 to 255 printable characters")
		})
	}
	require.Equal(t, http.StatusAccepted, h.postKeyed(`{}`, strings.Repeat("k", 255)).Status, "255 is allowed")
	require.Equal(t, http.StatusAccepted, h.postKeyed(`{}`, ` ~!"#$%&'()*+,-./:;<=>?@[\]^_{|} `).Status, "every printable character")
	require.Equal(t, 2.0, h.metric("jobledger_jobs_submitted_total"))
}

// TestIdempotencyKeyEvictedWithItsJob: once retention evicts the job, its
// key is free again.
func TestIdempotencyKeyEvictedWithItsJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) {
		c.Model = "echo"
		c.AsyncJobTTL = time.Minute
	})
	first, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "t"})
	require.NoError(t, err)
	h.waitDone(first.JobID)
	h.clock.Advance(time.Minute)
	h.waitDone(h.submit("evicts", nil))
	_, err = h.api.Snapshot(t.Context(), first.JobID)
	require.ErrorIs(t, err, client.ErrNotFound)
	fresh, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "other"})
	require.NoError(t, err)
	require.NotEqual(t, first.JobID, fresh.JobID)
	h.waitDone(fresh.JobID)
}

// TestIdempotencyKeyConcurrent: concurrent submits with one new key create
// one job, and all answer its id.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			acc, err := h.api.SubmitKeyed(context.Background(), "k", client.Request{TaskID: "t"})
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
			}
			ids[i] = acc.JobID
		})
	}
	wg.Wait()
	require.NotEmpty(t, ids[0])
	for i := range n {
		require.Equal(t, ids[0], ids[i])
	}
	h.waitDone(ids[0])
	require.Equal(t, 1.0, h.metric("jobledger_jobs_submitted_total"))
}

// TestIdempotencyKeyWithPrefer: a replay honours Prefer: wait like a first
// submit, answering the job's outcome.
func TestIdempotencyKeyWithPrefer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	first, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "t", Params: json.RawMessage(`{"fail":"boom"}`)})
	require.NoError(t, err)
	h.waitDone(first.JobID)
	req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/jobs", strings.NewReader(`{"task_id":"t","params":{"fail":"boom"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k")
	req.Header.Set("Prefer", "wait=5")
	resp, err := h.ts.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "wait=5", resp.Header.Get("Preference-Applied"))
}

// TestIdempotencyKeyReplayWaitHoldsNoBudget: a replay that waits
// (Prefer: wait) gives back its body's share of the submission byte
// budget before it waits, so that it does not refuse other submits.
func TestIdempotencyKeyReplayWaitHoldsNoBudget(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) {
		c.AsyncMaxQueue = 1 // a budget of one body of max_body_bytes
		c.MaxBodyBytes = 64
	})
	_, err := h.api.SubmitKeyed(t.Context(), "k", client.Request{TaskID: "t"})
	require.NoError(t, err)
	<-g.started
	got := make(chan int, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, h.ts.URL+"/jobs", strings.NewReader(`{"task_id":"t"}`))
		if err != nil {
			got <- -1
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k")
		req.Header.Set("Prefer", "wait=5")
		resp, err := h.ts.Client().Do(req)
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	until(t, "the replay waits", func() bool { return jobapi.Waiting(h.srv) == 1 })
	_, err = h.api.SubmitKeyed(t.Context(), "k2", client.Request{TaskID: "u"})
	requireAPIError(t, err, http.StatusTooManyRequests, "job queue is full")
	g.release <- struct{}{}
	require.Equal(t, http.StatusOK, <-got)
}

// TestIdempotencyKeyBodyEdges: a keyed submit's body is read whole before
// the key is looked up, without an http.MaxBytesReader when its
// Content-Length is known. A body that breaks off before its
// Content-Length is 400, one over max_body_bytes is 413 whether its length
// is known or not (chunked), and none of them creates a job or answers
// from the key's job; bytes past a known Content-Length are not read, as
// an http.Server never hands them to the handler.
func TestIdempotencyKeyBodyEdges(t *testing.T) {
	t.Parallel()
	const maxBody = 64
	h := newHarness(t, nil, func(c *jobapi.Config) { echoConfig(c); c.MaxBodyBytes = maxBody })
	const body = `{"task_id":"t"}`
	first := h.postKeyed(body, "k")
	require.Equal(t, http.StatusAccepted, first.Status, "%s", first.Raw)
	call := func(key string, rd io.Reader, length int64) reply {
		req := httptest.NewRequest(http.MethodPost, "/jobs", rd)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		r := reply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
		require.NoError(t, json.Unmarshal(r.Raw, &r.Body), "%s", r.Raw)
		return r
	}
	long := `{"task_id":"` + strings.Repeat("x", maxBody) + `"}`
	for _, key := range []string{"k", "new"} {
		requireProblem(t, call(key, strings.NewReader(body[:5]), int64(len(body))), http.StatusBadRequest, "body is not valid JSON")
		requireProblem(t, call(key, strings.NewReader(long), int64(len(long))), http.StatusRequestEntityTooLarge, "body exceeds max_body_bytes")
		requireProblem(t, call(key, io.MultiReader(strings.NewReader(long)), -1), http.StatusRequestEntityTooLarge, "body exceeds max_body_bytes")
	}
	again := call("k", strings.NewReader(body+"trailing"), int64(len(body)))
	require.Equal(t, http.StatusAccepted, again.Status, "%s", again.Raw)
	require.Equal(t, first.Body, again.Body)
	require.Equal(t, 1.0, h.metric("jobledger_jobs_submitted_total"))
}
