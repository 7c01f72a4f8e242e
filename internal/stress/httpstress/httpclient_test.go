package httpstress_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/internal/stress/httpstress"
	"github.com/jobledger/jobledger/linearizability"
)

// TestHTTPClientRecords pins what the recording HTTP client writes into the
// history for each reply: 202 and 200 are OK, 429 QueueFull, 404 NotFound,
// 409 NotDone (result) or Terminal (cancel) with the problem's state; any
// other status, or a body it cannot read, leaves the operation pending
// forever (transport errors: TestHTTPClientDropsUnsent).
func TestHTTPClientRecords(t *testing.T) {
	const (
		running = `{"job_id":"j","task_id":"t","state":"RUNNING","created_at":"2026-11-30T12:00:00Z","started_at":"2026-11-30T12:00:01Z"}`
		failed  = `{"job_id":"j","task_id":"t","state":"FAILED","error":"canceled","created_at":"2026-11-30T12:00:00Z","completed_at":"2026-11-30T12:00:01Z"}`
	)
	pending := linearizability.Output{}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		call   func(*httpstress.HTTPClient) error
		want   linearizability.Output // the zero Output: pending forever
	}{
		{"submit 202", 202, `{"job_id":"j","state":"PENDING"}`, recordSubmit, linearizability.Output{Outcome: linearizability.OK, ID: "j"}},
		{"submit 429", 429, ``, recordSubmit, linearizability.Output{Outcome: linearizability.QueueFull}},
		{"submit 200", 200, `{"job_id":"j","state":"PENDING"}`, recordSubmit, pending},
		{"submit 503", 503, `{"status":503,"detail":"server shutting down"}`, recordSubmit, pending},
		{"submit 202 without id", 202, `{"state":"PENDING"}`, recordSubmit, pending},
		{"keyed submit 202", 202, `{"job_id":"j","state":"PENDING"}`, recordSubmitKeyed, linearizability.Output{Outcome: linearizability.OK, ID: "j"}},
		{"keyed submit 429", 429, ``, recordSubmitKeyed, linearizability.Output{Outcome: linearizability.QueueFull}},
		{"keyed submit 422", 422, `{"status":422,"detail":"Idempotency-Key was used for another request"}`, recordSubmitKeyed, linearizability.Output{Outcome: linearizability.KeyConflict}},
		{"keyed submit 422 for the body", 422, `{"status":422,"detail":"invalid params"}`, recordSubmitKeyed, pending},
		{"keyed submit 400", 400, `{"status":400,"detail":"Idempotency-Key must be 1 to 255 printable characters"}`, recordSubmitKeyed, pending},
		{"snapshot 200", 200, running, recordSnapshot, linearizability.Output{Outcome: linearizability.OK, State: linearizability.StateRunning, TaskID: "t", Started: true}},
		{"snapshot 404", 404, `{"detail":"no such job"}`, recordSnapshot, linearizability.Output{Outcome: linearizability.NotFound}},
		{"snapshot 409", 409, `{"state":"DONE"}`, recordSnapshot, pending},
		{"snapshot unknown state", 200, `{"state":"LOST"}`, recordSnapshot, pending},
		{"snapshot not JSON", 200, `<html>`, recordSnapshot, pending},
		{"wait terminal", 200, failed, recordWait, linearizability.Output{Outcome: linearizability.OK, State: linearizability.StateFailed, TaskID: "t", Err: "canceled", Completed: true}},
		{"wait timed out", 200, running, recordWait, linearizability.Output{Outcome: linearizability.Deadline, State: linearizability.StateRunning, TaskID: "t", Started: true}},
		{"result 200", 200, `{"task_id":"t","state":"DONE","result":{ "n" : 1 }}`, recordResult, linearizability.Output{Outcome: linearizability.OK, State: linearizability.StateDone, TaskID: "t", Value: `{"n":1}`}},
		{"result 409", 409, `{"status":409,"state":"RUNNING"}`, recordResult, linearizability.Output{Outcome: linearizability.NotDone, State: linearizability.StateRunning}},
		{"result 409 without state", 409, `{"status":409}`, recordResult, pending},
		{"result 409 not a problem", 409, `conflict`, recordResult, pending},
		{"result 404", 404, ``, recordResult, linearizability.Output{Outcome: linearizability.NotFound}},
		{"result 500", 500, ``, recordResult, pending},
		{"cancel 200", 200, failed, recordCancel, linearizability.Output{Outcome: linearizability.OK, State: linearizability.StateFailed, TaskID: "t", Err: "canceled", Completed: true}},
		{"cancel 409", 409, `{"state":"DONE"}`, recordCancel, linearizability.Output{Outcome: linearizability.Terminal, State: linearizability.StateDone}},
		{"cancel 429", 429, ``, recordCancel, pending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer ts.Close()
			rec := stress.NewRecorder()
			err := tc.call(httpstress.NewHTTPClient(rec, newAPI(t, ts)))
			h := rec.History()
			require.Len(t, h, 1)
			op := h[0]
			require.Equal(t, tc.want, op.Output)
			if tc.want == pending {
				require.Error(t, err)
				require.Equal(t, int64(linearizability.Pending), op.Return)
				return
			}
			require.NoError(t, err)
			require.Less(t, op.Call, op.Return)
		})
	}
}

// TestHTTPClientDropsUnsent: a call that could not connect (nothing
// listens) is no operation of the history, for it never reached the
// server; a call whose connection died after its request was sent stays
// pending forever, since the server may have acted on it. A keyed submit
// is never dropped (TestHTTPClientKeepsKeyedUnsent).
func TestHTTPClientDropsUnsent(t *testing.T) {
	calls := map[string]func(*httpstress.HTTPClient) error{
		"submit": recordSubmit, "snapshot": recordSnapshot,
		"wait": recordWait, "result": recordResult, "cancel": recordCancel,
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // its port now refuses connections
	hungUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hungUp.Close()
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			rec := stress.NewRecorder()
			require.Error(t, call(httpstress.NewHTTPClient(rec, newAPI(t, closed))))
			require.Empty(t, rec.History(), "a call that never connected")

			rec = stress.NewRecorder()
			require.Error(t, call(httpstress.NewHTTPClient(rec, newAPI(t, hungUp))))
			h := rec.History()
			require.Len(t, h, 1, "a call the server hung up on")
			require.Equal(t, int64(linearizability.Pending), h[0].Return)
			require.Equal(t, linearizability.Unknown, h[0].Output.(linearizability.Output).Outcome)
		})
	}
}

// TestHTTPClientKeepsKeyedUnsent: a keyed submit that could not connect
// stays pending forever, since net/http may have sent it on a connection
// that broke before it dialled again.
func TestHTTPClientKeepsKeyedUnsent(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	rec := stress.NewRecorder()
	require.Error(t, recordSubmitKeyed(httpstress.NewHTTPClient(rec, newAPI(t, closed))))
	h := rec.History()
	require.Len(t, h, 1)
	require.Equal(t, int64(linearizability.Pending), h[0].Return)
}

// TestHTTPClientRecordsSubmitWait pins what the recording client writes for
// POST /jobs with Prefer: wait: a 200 is OK with the result (DONE) or the
// terminal snapshot, expires_at included; a 202 is Deadline; both with the
// job's id and the wait the server applied (Preference-Applied), the call
// left where it was. A 429 is QueueFull; a reply it cannot read is
// pending forever.
func TestHTTPClientRecordsSubmitWait(t *testing.T) {
	const timedOut = `{"job_id":"j","task_id":"t","state":"TIMEOUT","error":"deadline exceeded","created_at":"2026-11-30T12:00:00Z","started_at":"2026-11-30T12:00:01Z","completed_at":"2026-11-30T12:00:02Z","expires_at":"2026-11-30T12:10:02Z"}`
	const second = int64(time.Second)
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   linearizability.Output // the zero Output: pending forever
	}{
		{"200 result", 200, `{"job_id":"j","task_id":"t","state":"DONE","result":{ "n" : 1 }}`,
			linearizability.Output{Outcome: linearizability.OK, ID: "j", State: linearizability.StateDone, TaskID: "t", Value: `{"n":1}`, Waited: 2 * second}},
		{"200 snapshot", 200, timedOut,
			linearizability.Output{Outcome: linearizability.OK, ID: "j", State: linearizability.StateTimedOut, TaskID: "t", Err: "deadline exceeded", Started: true, Completed: true, Expires: true, Waited: 2 * second}},
		{"202 after the wait", 202, `{"job_id":"j","state":"PENDING"}`,
			linearizability.Output{Outcome: linearizability.Deadline, ID: "j", Waited: 2 * second}},
		{"429", 429, ``, linearizability.Output{Outcome: linearizability.QueueFull}},
		{"200 unknown state", 200, `{"job_id":"j","state":"LOST"}`, linearizability.Output{}},
		{"503", 503, `{"status":503}`, linearizability.Output{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Prefer") != "wait=3" {
					w.WriteHeader(http.StatusTeapot)
					return
				}
				if tc.status != 429 {
					w.Header().Set("Preference-Applied", "wait=2")
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer ts.Close()
			rec := stress.NewRecorder()
			id, out, err := httpstress.NewHTTPClient(rec, newAPI(t, ts)).SubmitWait(context.Background(), "t", `{"n":1}`, 3*time.Second)
			h := rec.History()
			require.Len(t, h, 1)
			op := h[0]
			require.Equal(t, linearizability.Input{Kind: linearizability.SubmitWait, TaskID: "t", Value: `{"n":1}`}, op.Input)
			require.Equal(t, tc.want, op.Output)
			if tc.want == (linearizability.Output{}) {
				require.Error(t, err)
				require.Equal(t, int64(linearizability.Pending), op.Return)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, out)
			require.Equal(t, tc.want.ID, id)
			require.Less(t, op.Call, op.Return)
		})
	}
}

// TestHTTPClientNarrowsWait: a wait that returned on the server's timeout
// read the job no earlier than its call plus the timeout.
func TestHTTPClientNarrowsWait(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, `{"state":"PENDING"}`)
	}))
	defer ts.Close()
	rec := stress.NewRecorder()
	before := rec.Clock().Now()
	_, err := httpstress.NewHTTPClient(rec, newAPI(t, ts)).Wait(context.Background(), "j", 10*time.Millisecond)
	require.NoError(t, err)
	op := rec.History()[0]
	require.Equal(t, linearizability.Deadline, op.Output.(linearizability.Output).Outcome)
	require.Greater(t, op.Call, before+int64(10*time.Millisecond))
	require.Less(t, op.Call, op.Return)
}

func newAPI(t *testing.T, ts *httptest.Server) *client.Client {
	t.Helper()
	api, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client()})
	require.NoError(t, err)
	return api
}

func recordSubmit(h *httpstress.HTTPClient) error {
	_, _, err := h.Submit(context.Background(), "t", `{"n":1}`)
	return err
}

func recordSubmitKeyed(h *httpstress.HTTPClient) error {
	_, _, err := h.SubmitKeyed(context.Background(), "k", "t", `{"n":1}`)
	return err
}

// TestHTTPClientRecordsKeyedSubmit: a keyed submit is recorded with its key
// and a digest of its body, equal for equal bodies, and the key travels as
// the Idempotency-Key header.
func TestHTTPClientRecordsKeyedSubmit(t *testing.T) {
	var keys []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"job_id":"j","state":"PENDING"}`)
	}))
	defer ts.Close()
	rec := stress.NewRecorder()
	c := httpstress.NewHTTPClient(rec, newAPI(t, ts))
	for _, params := range []string{`{"n":1}`, `{"n":1}`, `{"n":2}`} {
		_, _, err := c.SubmitKeyed(context.Background(), "k1", "t", params)
		require.NoError(t, err)
	}
	h := rec.History()
	require.Len(t, h, 3)
	in := func(i int) linearizability.Input { return h[i].Input.(linearizability.Input) }
	require.Equal(t, []string{"k1", "k1", "k1"}, keys)
	require.Equal(t, linearizability.SubmitKeyed, in(0).Kind)
	require.Equal(t, "k1", in(0).Key)
	require.Equal(t, `{"n":1}`, in(0).Value)
	require.NotEmpty(t, in(0).Digest)
	require.Equal(t, in(0).Digest, in(1).Digest, "equal bodies, equal digests")
	require.NotEqual(t, in(0).Digest, in(2).Digest, "another body, another digest")
}

func recordSnapshot(h *httpstress.HTTPClient) error {
	_, err := h.Snapshot(context.Background(), "j")
	return err
}
func recordWait(h *httpstress.HTTPClient) error {
	_, err := h.Wait(context.Background(), "j", time.Millisecond)
	return err
}
func recordResult(h *httpstress.HTTPClient) error {
	_, err := h.Result(context.Background(), "j")
	return err
}
func recordCancel(h *httpstress.HTTPClient) error {
	_, err := h.Cancel(context.Background(), "j")
	return err
}
