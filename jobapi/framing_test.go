package jobapi_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawGuard bounds each raw connection of these tests. It asserts nothing
// about time: it only stops a broken server from hanging the test.
const rawGuard = 30 * time.Second

// rawExchange writes req on a fresh loopback connection to h and reads
// every reply until the server closes the connection, or until the
// connection has sat idle for idle after the first reply (a connection
// kept alive). It returns the replies, each with its body read.
func rawExchange(t *testing.T, h *harness, req string, idle time.Duration) []*http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(rawGuard)))
	_, err = io.WriteString(conn, req)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	var replies []*http.Response
	for range 4 {
		if len(replies) > 0 {
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(idle)))
		}
		if _, err := br.Peek(1); err != nil {
			var ne net.Error
			if len(replies) > 0 && (errors.Is(err, io.EOF) || (errors.As(err, &ne) && ne.Timeout())) {
				return replies // closed, or kept alive and idle
			}
			require.NoError(t, err)
		}
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		replies = append(replies, resp)
	}
	t.Fatalf("more than 3 replies to one write")
	return nil
}

// TestChunkedWithContentLengthClosesConnection pins the bug where a
// request with both Transfer-Encoding: chunked and Content-Length was
// served and its connection kept open, so that a second request hidden
// in its body, where a proxy framing by Content-Length saw none, was
// answered too. RFC 9112 §6.1: the connection is closed after the reply.
func TestChunkedWithContentLengthClosesConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	body := "d\r\n{\"task_id\":1}\r\n0\r\n\r\n"
	smuggled := "GET /jobs/smuggled HTTP/1.1\r\nHost: jobapi\r\n\r\n"
	for _, tc := range []struct {
		name, header string
	}{
		{"both", fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(body)+len(smuggled))},
		{"chunked alone", "Transfer-Encoding: chunked\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := "POST /jobs HTTP/1.1\r\nHost: jobapi\r\nContent-Type: application/json\r\n" + tc.header + "\r\n" + body + smuggled
			replies := rawExchange(t, h, req, 2*time.Second)
			require.Len(t, replies, 1, "only the first request is answered")
			require.Equal(t, http.StatusBadRequest, replies[0].StatusCode, "task_id 1 is a field of the wrong type")
			require.True(t, replies[0].Close, "the reply says Connection: close")
		})
	}
	t.Run("content-length alone is kept alive", func(t *testing.T) {
		first := `{"task_id":1}`
		req := fmt.Sprintf("POST /jobs HTTP/1.1\r\nHost: jobapi\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(first), first) +
			"GET /jobs/second HTTP/1.1\r\nHost: jobapi\r\nConnection: close\r\n\r\n"
		replies := rawExchange(t, h, req, 2*time.Second)
		require.Len(t, replies, 2, "both pipelined requests are answered")
		require.Equal(t, http.StatusNotFound, replies[1].StatusCode)
		require.True(t, strings.HasPrefix(replies[1].Header.Get("Content-Type"), "application/problem+json"))
	})
}
