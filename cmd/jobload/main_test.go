package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/jobledger/jobledger/client"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i))
	}
	require.Equal(t, time.Duration(50), percentile(lat, 50))
	require.Equal(t, time.Duration(90), percentile(lat, 90))
	require.Equal(t, time.Duration(99), percentile(lat, 99))
	require.Equal(t, time.Duration(7), percentile([]time.Duration{7}, 99))
	require.Equal(t, time.Duration(0), percentile(nil, 50))
}

func TestParseRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "10.1.2.3:80"},
		{"-addr", "example.com:80"},
		{"-mode", "both"},
		{"-c", "0"},
		{"-d", "0s"},
		{"-d", "2h"},
		{"-n", "-1"},
	} {
		_, err := parse(args, io.Discard)
		require.Error(t, err, "%v", args)
	}
	s, err := parse([]string{"-addr", "[::1]:9"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "async", s.mode)
}

// fakeAPI answers the async cycle: the first job is accepted, then 429s.
func fakeAPI() http.Handler {
	mux := http.NewServeMux()
	accepted := false
	mux.HandleFunc("POST /jobs", func(w http.ResponseWriter, _ *http.Request) {
		if accepted {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		accepted = true
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"job_id":"j","state":"PENDING"}`)
	})
	mux.HandleFunc("GET /jobs/j/wait", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"job_id":"j","state":"DONE"}`)
	})
	mux.HandleFunc("GET /jobs/j/result", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"job_id":"j","state":"DONE","result":{}}`)
	})
	return mux
}

func TestRunCountsOutcomes(t *testing.T) {
	ts := httptest.NewServer(fakeAPI())
	defer ts.Close()
	var out, errOut strings.Builder
	code, err := run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-c", "1", "-n", "3", "-d", "1m"}, &out, &errOut)
	require.NoError(t, err)
	require.Equal(t, 0, code, out.String())
	require.Contains(t, out.String(), "ok=1 rejected_429=2 errors=0")
}

func TestAsyncCycleReportsFailedJobs(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"job_id":"j"}`)
			return
		}
		io.WriteString(w, `{"state":"FAILED"}`)
	}))
	defer ts.Close()
	body, err := requestBody(0)
	require.NoError(t, err)
	api, err := client.New(ts.URL, client.Options{HTTPClient: ts.Client()})
	require.NoError(t, err)
	l := &loader{api: api, body: body}
	require.Equal(t, resultError, l.asyncCycle(context.Background()))
}

// TestNRunCutShortByDefaultD pins the bug where the default -d of 10s
// stopped an -n run early: -n alone runs every operation, -d bounds it only
// when given, and the summary says which bound stopped the run.
func TestNRunCutShortByDefaultD(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 10 * time.Second},
		{[]string{"-n", "5"}, 0}, // no time limit
		{[]string{"-n", "5", "-d", "10s"}, 10 * time.Second},
		{[]string{"-d", "3s"}, 3 * time.Second},
	} {
		s, err := parse(c.args, io.Discard)
		require.NoError(t, err, "%v", c.args)
		require.Equal(t, c.want, s.duration, "%v", c.args)
	}

	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"task_id":"jobload","result":{}}`)
	}))
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")

	var out strings.Builder
	code, err := run([]string{"-addr", addr, "-mode", "sync", "-c", "2", "-n", "7"}, &out, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 0, code, out.String())
	require.Contains(t, out.String(), "ok=7 ")
	require.Contains(t, out.String(), "stopped: -n 7 reached\n")

	out.Reset()
	code, err = run([]string{"-addr", addr, "-mode", "sync", "-c", "2", "-d", "50ms"}, &out, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 0, code, out.String())
	require.Contains(t, out.String(), "stopped: -d 50ms elapsed\n")
}

// TestImageFlag checks that -image sends the file's bytes, base64, with no
// params, and refuses what cannot work.
func TestImageFlag(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "picture.png")
	data := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}, 4096) // any bytes: the fake server does not decode them
	require.NoError(t, os.WriteFile(img, data, 0o600))

	bodies := make(chan []byte, 4)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- body
		io.WriteString(w, `{"task_id":"jobload","result":{}}`)
	}))
	defer ts.Close()
	var out strings.Builder
	code, err := run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-mode", "sync", "-c", "1", "-n", "1", "-image", img}, &out, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 0, code, out.String())
	var sent map[string]any
	require.NoError(t, json.Unmarshal(<-bodies, &sent))
	require.Equal(t, map[string]any{"task_id": "jobload", "image": base64.StdEncoding.EncodeToString(data)}, sent)

	for _, args := range [][]string{
		{"-image", filepath.Join(dir, "missing.png"), "-n", "1"},
		{"-image", img, "-sleep-ms", "5"},
	} {
		_, err := run(append([]string{"-addr", strings.TrimPrefix(ts.URL, "http://")}, args...), io.Discard, io.Discard)
		require.Error(t, err, "%v", args)
	}
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	_, err = run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-image", img, "-n", "1"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "empty")
}

// TestTokenFromEnvironment: with JOBLEDGER_TOKEN set, every request
// carries it as a bearer token.
func TestTokenFromEnvironment(t *testing.T) {
	t.Setenv(tokenEnv, "tok")
	var unauthorized atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			unauthorized.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"task_id":"","result":{}}`)
	}))
	defer ts.Close()
	var out bytes.Buffer
	code, err := run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-mode", "sync", "-n", "3", "-c", "1"}, &out, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 0, code, out.String())
	require.Zero(t, unauthorized.Load())
}
