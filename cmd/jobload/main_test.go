package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
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
		io.WriteString(w, `{"job_id":"j","state":"PENDING"}`) //nolint:errcheck
	})
	mux.HandleFunc("GET /jobs/j/wait", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"job_id":"j","state":"DONE"}`) //nolint:errcheck
	})
	mux.HandleFunc("GET /jobs/j/result", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"job_id":"j","state":"DONE","result":{}}`) //nolint:errcheck
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
			io.WriteString(w, `{"job_id":"j"}`) //nolint:errcheck
			return
		}
		io.WriteString(w, `{"state":"FAILED"}`) //nolint:errcheck
	}))
	defer ts.Close()
	body, err := requestBody(0)
	require.NoError(t, err)
	c := &client{http: ts.Client(), base: ts.URL, body: body}
	require.Equal(t, resultError, c.asyncCycle(context.Background()))
}
