package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
)

// fake serves h on 127.0.0.1 and returns a Client of it, for replies the
// real server never writes (a proxy's, a broken server's).
func fake(t *testing.T, opts client.Options, h http.HandlerFunc) *client.Client {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	opts.HTTPClient = ts.Client()
	c, err := client.New(ts.URL, opts)
	require.NoError(t, err)
	return c
}

func TestNewRefuses(t *testing.T) {
	for _, base := range []string{"", "127.0.0.1:8080", "ftp://h/", "http://", "http://h/?q=1", "http://h/#f", "http://h/%zz"} {
		_, err := client.New(base, client.Options{})
		require.Error(t, err, "%q", base)
	}
	_, err := client.New("http://h", client.Options{MaxReplyBytes: -1})
	require.Error(t, err)
	_, err = client.New("https://h:1/a/b/", client.Options{})
	require.NoError(t, err)
}

// TestReplyNotAProblem: a proxy's plain-text reply is an *Error with its
// body and no members; the sentinel still follows the status.
func TestReplyNotAProblem(t *testing.T) {
	c := fake(t, client.Options{}, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "upstream is down\n")
	})
	_, err := c.Snapshot(context.Background(), "j")
	require.ErrorIs(t, err, client.ErrUnavailable)
	e := apiError(t, err)
	require.Nil(t, e.Members)
	require.Empty(t, e.Detail)
	require.Equal(t, "upstream is down\n", string(e.Body))
	require.Contains(t, e.Error(), `503 Service Unavailable: "upstream is down"`)
}

func TestRetryAfterDate(t *testing.T) {
	date := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := fake(t, client.Options{}, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", date.Format(http.TimeFormat))
		w.Header().Set("Retry-After", date.Add(90*time.Second).Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	})
	_, err := c.Submit(context.Background(), client.Request{})
	require.ErrorIs(t, err, client.ErrQueueFull)
	require.Equal(t, 90*time.Second, apiError(t, err).RetryAfter)
}

// TestUnexpectedSuccess: a status other than the route's own success is an
// error even when it is a 2xx (a 200 to POST /jobs admitted nothing the
// contract knows of).
func TestUnexpectedSuccess(t *testing.T) {
	c := fake(t, client.Options{}, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"job_id":"j","state":"PENDING"}`)
	})
	_, err := c.Submit(context.Background(), client.Request{})
	require.Equal(t, http.StatusOK, apiError(t, err).StatusCode)
}

func TestMalformedReplies(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		want   string
	}{
		"no job_id":  {http.StatusAccepted, `{"state":"PENDING"}`, "without a job_id"},
		"not json":   {http.StatusAccepted, `<html>`, "202 reply"},
		"too long":   {http.StatusAccepted, `{"job_id":"j","state":"PENDING","pad":"` + string(make([]byte, 100)) + `"}`, "reply longer than 64 bytes"},
		"bad header": {http.StatusAccepted, `{"job_id":"j"}`, "Location"},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake(t, client.Options{MaxReplyBytes: 64}, func(w http.ResponseWriter, _ *http.Request) {
				if name == "bad header" {
					w.Header().Set("Location", "%zz")
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := c.Submit(context.Background(), client.Request{})
			require.ErrorContains(t, err, tc.want)
			var e *client.Error
			require.NotErrorAs(t, err, &e)
		})
	}
}

// TestEscapedID: a job id is one path segment, whatever it holds.
func TestEscapedID(t *testing.T) {
	paths := make(chan string, 1)
	c := fake(t, client.Options{}, func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.EscapedPath() + "?" + r.URL.RawQuery
		io.WriteString(w, `{"job_id":"a/b c","state":"DONE"}`)
	})
	_, err := c.Wait(context.Background(), "a/b c", 1500*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, "/jobs/a%2Fb%20c/wait?timeout=1500", <-paths)
	_, err = c.Wait(context.Background(), "j", -1)
	require.NoError(t, err)
	require.Equal(t, "/jobs/j/wait?", <-paths)
}
