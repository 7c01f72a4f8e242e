package jobapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobapi"
)

// compareChunk is how many operations of each side run back to back before
// switching to the other side.
const compareChunk = 4

// discardWriter is a ResponseWriter that keeps nothing, so that a benchmark
// measures the handler and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }

func benchServer(b *testing.B, model jobapi.Model, mutate func(*jobapi.Config)) *jobapi.Server {
	b.Helper()
	cfg := jobapi.DefaultConfig()
	cfg.Model = "echo"
	cfg.AsyncMaxQueue = 1 << 20
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := jobapi.New(memoryStore(b, cfg, nil), cfg, jobapi.Options{Model: model, Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(b, err)
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

func serve(h http.Handler, method, target, body string) *discardWriter {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := &discardWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	return w
}

// getJobFixture admits one job, lets it finish, and returns the server,
// the job's path and the exact bytes GET returns for it.
func getJobFixture(b *testing.B) (*jobapi.Server, string, []byte) {
	b.Helper()
	srv := benchServer(b, nil, nil)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(`{"task_id":"bench"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	require.Equal(b, http.StatusAccepted, rec.Code)
	loc, err := req.URL.Parse(rec.Header().Get("Location")) // a relative reference
	require.NoError(b, err)
	target := loc.Path
	require.Equal(b, http.StatusOK, serve(srv, http.MethodGet, target+"/wait", "").status)
	snapshot := httptest.NewRecorder()
	srv.ServeHTTP(snapshot, httptest.NewRequest(http.MethodGet, target, nil))
	require.Contains(b, snapshot.Body.String(), `"DONE"`)
	return srv, target, snapshot.Body.Bytes()
}

// bareHandler writes body, prepared in advance, as GET /jobs/{id} would.
func bareHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
}

// BenchmarkGetJob compares GET /jobs/{id} through the whole API (routing,
// method dispatch, metrics, the ledger, encoding) with a bare handler that
// writes the same JSON bytes, prepared in advance, both served over
// loopback HTTP by a keep-alive client. ratio is the API's throughput as a
// fraction of the bare handler's.
func BenchmarkGetJob(b *testing.B) {
	srv, target, body := getJobFixture(b)
	api := httptest.NewServer(srv)
	defer api.Close()
	bare := httptest.NewServer(bareHandler(body))
	defer bare.Close()
	get := func(ts *httptest.Server) func() error {
		client := ts.Client()
		return func() error {
			resp, err := client.Get(ts.URL + target)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	benchcmp.Alternate(b, compareChunk, get(api), get(bare))
}

// BenchmarkGetJobHandler is BenchmarkGetJob without the network: the
// handlers are called directly with a reused request and writer, so the
// ratio is of the handlers alone.
func BenchmarkGetJobHandler(b *testing.B) {
	srv, target, body := getJobFixture(b)
	call := func(h http.Handler) func() error {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		w := &discardWriter{h: http.Header{}}
		return func() error {
			clear(w.h)
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				return fmt.Errorf("status %d", w.status)
			}
			return nil
		}
	}
	benchcmp.Alternate(b, compareChunk, call(srv), call(bareHandler(body)))
}

// BenchmarkCycle compares one asynchronous job cycle (POST /jobs, GET
// wait, GET result) with one synchronous POST /infer, both on echo at
// sleep 0 over loopback HTTP. ratio is async jobs/s as a fraction of sync
// requests/s.
func BenchmarkCycle(b *testing.B) {
	srv := benchServer(b, nil, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	client := ts.Client()
	const body = `{"task_id":"bench","params":{"sleep_ms":0}}`
	call := func(method, path string, payload string, want int) (*http.Response, error) {
		var r io.Reader
		if payload != "" {
			r = strings.NewReader(payload)
		}
		req, err := http.NewRequest(method, ts.URL+path, r)
		if err != nil {
			return nil, err
		}
		if payload != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			return nil, fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
		}
		return resp, nil
	}
	async := func() error {
		resp, err := call(http.MethodPost, "/jobs", body, http.StatusAccepted)
		if err != nil {
			return err
		}
		u, err := resp.Request.URL.Parse(resp.Header.Get("Location")) // a relative reference
		if err != nil {
			return err
		}
		loc := u.Path
		if _, err := call(http.MethodGet, loc+"/wait", "", http.StatusOK); err != nil {
			return err
		}
		_, err = call(http.MethodGet, loc+"/result", "", http.StatusOK)
		return err
	}
	sync := func() error {
		_, err := call(http.MethodPost, "/infer", body, http.StatusOK)
		return err
	}
	benchcmp.Alternate(b, compareChunk, async, sync)
}

// BenchmarkWaitWakeup measures, over loopback HTTP, the time from a job's
// completion to its blocked waiter's reply, reported as wake-ns/op.
func BenchmarkWaitWakeup(b *testing.B) {
	g := newGate()
	srv := benchServer(b, g, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	client := ts.Client()
	var total time.Duration
	for b.Loop() {
		resp, err := client.Post(ts.URL+"/jobs", "application/json", bytes.NewReader([]byte(`{}`)))
		require.NoError(b, err)
		resp.Body.Close()
		u, err := resp.Request.URL.Parse(resp.Header.Get("Location")) // a relative reference
		require.NoError(b, err)
		loc := u.Path
		<-g.started
		type done struct {
			at   time.Time
			body []byte
		}
		got := make(chan done, 1)
		go func() {
			resp, err := client.Get(ts.URL + loc + "/wait")
			if err != nil {
				got <- done{}
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- done{time.Now(), data}
		}()
		for i := 0; jobapi.Waiting(srv) != 1; i++ {
			if i > 1e8 {
				b.Fatal("waiter never blocked")
			}
		}
		start := time.Now()
		g.release <- struct{}{}
		d := <-got
		require.Contains(b, string(d.body), `"DONE"`)
		total += d.at.Sub(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "wake-ns/op")
}

// replayFixture admits one job under an Idempotency-Key, lets it finish,
// and returns the server, the body to replay and the job's path.
func replayFixture(b *testing.B) (*jobapi.Server, string, string) {
	b.Helper()
	srv := benchServer(b, nil, nil)
	const body = `{"task_id":"bench","params":{"sleep_ms":0}}`
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "bench-key")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	require.Equal(b, http.StatusAccepted, rec.Code)
	target := "/" + rec.Header().Get("Location")
	require.Equal(b, http.StatusOK, serve(srv, http.MethodGet, target+"/wait", "").status)
	return srv, body, target
}

// BenchmarkKeyedReplay compares a replay of POST /jobs under an
// Idempotency-Key (the job exists: the body is parsed and hashed, the key
// looked up in the ledger, the 202 written) with GET /jobs/{id} of the
// same job, both over loopback HTTP by a keep-alive client, as a client
// sees them. The target is a replay that costs no more than a GET of the
// job: ratio (GET time / replay time) at or above 1.
func BenchmarkKeyedReplay(b *testing.B) {
	srv, body, target := replayFixture(b)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	replay := clientOp(ts, body, target, true, http.StatusAccepted)
	get := clientOp(ts, body, target, false, http.StatusOK)
	benchcmp.Alternate(b, compareChunk, replay, get)
}

// BenchmarkKeyedReplayHandler is BenchmarkKeyedReplay without the
// network: each handler is called with a reused request (the replay's body
// rewound each time), so the ratio is of the handlers alone. The replay
// parses and hashes its body, which a GET has none of.
func BenchmarkKeyedReplayHandler(b *testing.B) {
	srv, body, target := replayFixture(b)
	w := &discardWriter{h: http.Header{}}
	call := func(req *http.Request, reset func(), want int) func() error {
		return func() error {
			reset()
			clear(w.h)
			srv.ServeHTTP(w, req)
			if w.status != want {
				return fmt.Errorf("status %d", w.status)
			}
			return nil
		}
	}
	post := httptest.NewRequest(http.MethodPost, "/jobs", nil)
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Idempotency-Key", "bench-key")
	rd := strings.NewReader(body)
	rewind := func() {
		rd.Reset(body)
		post.Body, post.ContentLength = io.NopCloser(rd), int64(len(body))
	}
	get := httptest.NewRequest(http.MethodGet, target, nil)
	benchcmp.Alternate(b, compareChunk, call(post, rewind, http.StatusAccepted), call(get, func() {}, http.StatusOK))
}
