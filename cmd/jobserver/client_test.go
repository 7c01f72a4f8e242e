package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freshClient opens a new connection for every request, as a client that
// arrives after the signal does.
type freshClient struct {
	http *http.Client
	base string
}

func newFreshClient(t *testing.T, addr string) *freshClient {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &freshClient{http: &http.Client{Transport: tr, Timeout: time.Minute}, base: "http://" + addr}
}

// answer is one reply, its body decoded when it is a JSON object.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// do sends one request; a body is sent as application/json.
func (c *freshClient) do(t *testing.T, method, path, body string) answer {
	t.Helper()
	return c.doWith(t, method, path, body, nil)
}

// doWith is do with the fields of header added to the request.
func (c *freshClient) doWith(t *testing.T, method, path, body string, header http.Header) answer {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &a.body), "%s", raw)
	}
	return a
}
