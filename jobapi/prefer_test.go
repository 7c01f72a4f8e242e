package jobapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobapi"
)

// postPrefer posts a job body with the given Prefer fields (none when
// empty) under ctx; it returns the error of a request that did not get a
// reply.
func (h *harness) postPrefer(ctx context.Context, body map[string]any, prefer ...string) (reply, error) {
	data, err := json.Marshal(body)
	require.NoError(h.t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.ts.URL+"/jobs", bytes.NewReader(data))
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	for _, p := range prefer {
		req.Header.Add("Prefer", p)
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(h.t, json.Unmarshal(raw, &r.Body), "%s", raw)
	}
	return r, nil
}

// postPreferAsync runs postPrefer in a goroutine and returns its reply's
// channel.
func (h *harness) postPreferAsync(body map[string]any, prefer ...string) <-chan reply {
	got := make(chan reply, 1)
	go func() {
		r, err := h.postPrefer(context.Background(), body, prefer...)
		if err != nil {
			r = reply{Status: -1, Raw: []byte(err.Error())}
		}
		got <- r
	}()
	return got
}

// waited is SubmitWait's answer.
type waited struct {
	out client.Outcome
	err error
}

// submitWaitAsync runs the client's SubmitWait of req in a goroutine and
// returns its answer's channel.
func (h *harness) submitWaitAsync(req client.Request, wait time.Duration) <-chan waited {
	got := make(chan waited, 1)
	go func() {
		out, err := h.api.SubmitWait(context.Background(), req, wait)
		got <- waited{out, err}
	}()
	return got
}

// untilWaiting waits until n clients are blocked in a wait, so that the
// fake clock's timer of each is armed.
func (h *harness) untilWaiting(n int64) {
	h.t.Helper()
	until(h.t, "clients waiting", func() bool { return jobapi.Waiting(h.srv) == n })
}

// TestPreferWaitDone: a job that ends DONE within the wait answers 200
// with its result, Preference-Applied and Location.
func TestPreferWaitDone(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	got := h.postPreferAsync(map[string]any{"task_id": "t"}, "wait=5")
	<-g.started
	h.untilWaiting(1)
	g.release <- struct{}{}
	r := <-got
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "wait=5", r.Header.Get("Preference-Applied"))
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	id := r.Body["job_id"].(string)
	require.Equal(t, "jobs/"+id, r.Header.Get("Location"))
	require.Equal(t, "DONE", r.Body["state"])
	require.Equal(t, map[string]any{"task": "t"}, r.Body["result"])
	require.Equal(t, h.get("/jobs/"+id+"/result").Body, r.Body, "the result body of GET /jobs/{id}/result")
	require.Zero(t, jobapi.Waiting(h.srv))
}

// TestPreferWaitFailed: a job that ends FAILED within the wait answers 200
// with its terminal snapshot.
func TestPreferWaitFailed(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	got := h.submitWaitAsync(client.Request{TaskID: "t", Params: json.RawMessage(`{"fail":"boom"}`)}, 5*time.Second)
	<-g.started
	h.untilWaiting(1)
	g.release <- struct{}{}
	w := <-got
	require.NoError(t, w.err)
	require.Equal(t, 5*time.Second, w.out.Applied)
	require.Nil(t, w.out.Result)
	s := w.out.Snapshot
	require.NotNil(t, s, "the terminal snapshot")
	require.Equal(t, client.Failed, s.State)
	require.Equal(t, "boom", s.Error)
	require.NotZero(t, s.ExpiresAt)
	require.Equal(t, h.snapshot(w.out.JobID), *s, "the snapshot of GET /jobs/{id}")
}

// TestPreferWaitRunsOut: a job still running when the wait ends answers
// 202 as without the preference, saying the wait that was applied.
func TestPreferWaitRunsOut(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, nil)
	got := h.submitWaitAsync(client.Request{TaskID: "t"}, 5*time.Second)
	<-g.started
	h.untilWaiting(1)
	h.clock.Advance(5*time.Second - time.Millisecond)
	select {
	case w := <-got:
		t.Fatalf("answered before the wait ran out: %+v %v", w.out, w.err)
	default:
	}
	h.clock.Advance(time.Millisecond)
	w := <-got
	require.NoError(t, w.err)
	require.False(t, w.out.Ended(), "%+v", w.out)
	require.Equal(t, 5*time.Second, w.out.Applied)
	require.Equal(t, client.Pending, w.out.State)
	id := w.out.JobID
	require.Equal(t, h.ts.URL+"/jobs/"+id, w.out.Location.String())
	require.Equal(t, client.Running, h.snapshot(id).State, "the job runs on")
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(id).State)
}

// TestPreferWaitCappedByMaxWait: the wait is at most max_wait, in whole
// seconds, and Preference-Applied says the wait applied.
func TestPreferWaitCappedByMaxWait(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.MaxWait = 2500 * time.Millisecond })
	got := h.submitWaitAsync(client.Request{TaskID: "t"}, 600*time.Second)
	<-g.started
	h.untilWaiting(1)
	h.clock.Advance(2 * time.Second)
	w := <-got
	require.NoError(t, w.err)
	require.False(t, w.out.Ended(), "%+v", w.out)
	require.Equal(t, 2*time.Second, w.out.Applied)
	g.release <- struct{}{}
}

// TestPreferIgnored: a Prefer without a well-formed wait (RFC 7240: a
// preference the server does not understand is ignored), a wait of 0, and
// any wait when max_wait is under a second, answer 202 at once with no
// Preference-Applied. Only the first wait counts.
func TestPreferIgnored(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		maxWait time.Duration
		prefer  []string
	}{
		{"respond-async", jobapi.DefaultMaxWait, []string{"respond-async"}},
		{"no value", jobapi.DefaultMaxWait, []string{"wait"}},
		{"empty", jobapi.DefaultMaxWait, []string{"wait="}},
		{"negative", jobapi.DefaultMaxWait, []string{"wait=-1"}},
		{"fraction", jobapi.DefaultMaxWait, []string{"wait=1.5"}},
		{"word", jobapi.DefaultMaxWait, []string{"wait=soon"}},
		{"zero", jobapi.DefaultMaxWait, []string{"wait=0"}},
		{"first is ill-formed", jobapi.DefaultMaxWait, []string{"wait=x, wait=5"}},
		{"first field decides", jobapi.DefaultMaxWait, []string{"wait=0", "wait=5"}},
		{"quoted comma", jobapi.DefaultMaxWait, []string{`foo="a, wait=5"`}},
		{"max_wait under a second", 999 * time.Millisecond, []string{"wait=5"}},
		{"max_wait zero", 0, []string{"wait=5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGate()
			h := newHarness(t, g, func(cfg *jobapi.Config) { cfg.MaxWait = c.maxWait })
			r, err := h.postPrefer(context.Background(), map[string]any{"task_id": "t"}, c.prefer...)
			require.NoError(t, err)
			require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
			require.Empty(t, r.Header.Values("Preference-Applied"))
			<-g.started
		})
	}
}

// TestPreferWaitForms: the forms RFC 7240 allows for one well-formed wait.
func TestPreferWaitForms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		prefer []string
		want   string
	}{
		{"case and spaces", []string{"WAIT = 3"}, "wait=3"},
		{"quoted", []string{`wait="3"`}, "wait=3"},
		{"parameters", []string{"wait=3; x=y"}, "wait=3"},
		{"after others", []string{`handling=lenient, foo="a,b", wait=3`}, "wait=3"},
		{"second field", []string{"respond-async", "wait=3"}, "wait=3"},
		{"first of two", []string{"wait=3, wait=9"}, "wait=3"},
		{"huge", []string{"wait=99999999999999999999999"}, "wait=30"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGate()
			h := newHarness(t, g, nil)
			got := h.postPreferAsync(map[string]any{"task_id": "t"}, c.prefer...)
			<-g.started
			h.untilWaiting(1)
			g.release <- struct{}{}
			r := <-got
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			require.Equal(t, c.want, r.Header.Get("Preference-Applied"))
		})
	}
}

// TestPreferWaitClientGone: a client that hangs up during the wait gets
// nothing, the wait ends, and its job runs on.
func TestPreferWaitClientGone(t *testing.T) {
	t.Parallel()
	g := newGate()
	clock := newFakeClock()
	l, _ := openStore(t, "memory", "", harnessDefaults(), clock, fakeclock.Seq("j"))
	h := newHarnessOn(t, l, jobapi.Options{Model: g, Clock: clock, LedgerJobTTL: jobapi.DefaultAsyncJobTTL}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.api.SubmitWait(ctx, client.Request{TaskID: "t"}, 5*time.Second)
		done <- err
	}()
	<-g.started
	h.untilWaiting(1)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	h.untilWaiting(0)
	require.Equal(t, client.Running, h.snapshot("j1").State, "the job runs on")
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone("j1").State)
}

// TestPreferWaitEndsAtShutdown: on a durable store a job that has not
// started when the grace period ends is left PENDING for the next process,
// so a submit waiting on it must not wait on: it is answered 202 when the
// grace period ends.
func TestPreferWaitEndsAtShutdown(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarnessStore(t, "sqlite:"+filepath.Join(t.TempDir(), "jobs.db"), "", jobapi.Options{Model: g}, nil)
	h.submit("running", nil) // holds the one worker
	<-g.started
	got := h.submitWaitAsync(client.Request{TaskID: "pending"}, 30*time.Second)
	h.untilWaiting(1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace
	_ = h.srv.Shutdown(ctx)
	require.ErrorIs(t, <-g.ended, jobapi.ErrShuttingDown)
	w := <-got
	require.NoError(t, w.err)
	require.False(t, w.out.Ended(), "answered 202: %+v", w.out)
	require.Equal(t, 30*time.Second, w.out.Applied)
	require.Equal(t, client.Pending, h.snapshot(w.out.JobID).State, "left for the next process")
}

// TestPreferWaitStoreFails: once the job is admitted the answer is never
// an error. A store that fails the wait gets the 202; one that fails the
// read of a DONE job's result gets the DONE snapshot.
func TestPreferWaitStoreFails(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	st := newFailing(t, clock)
	g := newGate()
	h := newHarnessOn(t, st, jobapi.Options{Model: g, Clock: clock}, nil)

	st.failNext("Wait", 1)
	out, err := h.api.SubmitWait(t.Context(), client.Request{TaskID: "w"}, 5*time.Second)
	require.NoError(t, err)
	require.False(t, out.Ended(), "answered 202: %+v", out)
	require.Equal(t, 5*time.Second, out.Applied)
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(out.JobID).State)

	st.failNext("Result", 1)
	got := h.submitWaitAsync(client.Request{TaskID: "r"}, 5*time.Second)
	<-g.started
	h.untilWaiting(1)
	g.release <- struct{}{}
	w := <-got
	require.NoError(t, w.err)
	require.Nil(t, w.out.Result, "no result")
	require.NotNil(t, w.out.Snapshot, "the DONE snapshot")
	require.Equal(t, client.Done, w.out.Snapshot.State)
	require.Equal(t, h.ts.URL+"/jobs/"+w.out.JobID, w.out.Location.String())
}
