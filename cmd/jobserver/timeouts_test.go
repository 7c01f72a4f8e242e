package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// guard bounds each blocking read of these tests. It asserts nothing about
// time: it only stops a broken server from hanging the test.
const guard = 30 * time.Second

// TestNoReadOrIdleTimeout pins the bug where jobserver's http.Server had
// only a ReadHeaderTimeout: 2000 slow-body and 2000 idle keep-alive
// connections were all still held after 25 s. With the timeouts shortened
// by flags, the server closes both kinds, while the replies that are held
// longer than the write timeout (a wait, a Prefer: wait submit, /infer) are
// still answered whole.
func TestNoReadOrIdleTimeout(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	s := start(t, bin, "-model", "echo", "-grace", "0s", "-read-timeout", "300", "-idle-timeout", "300",
		"-write-timeout", "1000", "-max-wait", "2500")

	dial := func(t *testing.T) net.Conn {
		conn, err := net.Dial("tcp", s.addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		require.NoError(t, conn.SetDeadline(time.Now().Add(guard)))
		return conn
	}

	t.Run("idle keep-alive connection closed", func(t *testing.T) {
		conn := dial(t)
		_, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: jobserver\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.False(t, resp.Close, "the connection is kept alive")
		_, err = br.ReadByte() // the connection now sits idle
		require.ErrorIs(t, err, io.EOF, "the server must close an idle connection")
	})

	// A body cut off by the read timeout is answered 408, which a client
	// may retry, not 400 "body is not valid JSON" (the bug: it said the
	// request itself was wrong), and its connection closed.
	for _, path := range []string{"/jobs", "/infer"} {
		t.Run("slow body connection closed "+path, func(t *testing.T) {
			conn := dial(t)
			_, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: jobserver\r\n"+
				"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"task_id\":")
			require.NoError(t, err) // and the other 89 bytes never come
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "%s", body)
			require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			require.Contains(t, string(body), `"detail":"body did not arrive in time"`)
			_, err = io.ReadAll(br)
			require.NoError(t, err, "the server must close a connection whose body stalls") // EOF, not the guard
		})
	}

	t.Run("long wait outlives write timeout", func(t *testing.T) {
		c := newFreshClient(t, s.addr)
		a := c.do(t, http.MethodPost, "/jobs", `{"params":{"sleep_ms":600000}}`)
		require.Equal(t, http.StatusAccepted, a.status, "%s", a.raw)
		id := a.body["job_id"].(string)
		a = c.do(t, http.MethodGet, "/jobs/"+id+"/wait?timeout=2000", "") // past -write-timeout
		require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
		require.Equal(t, "RUNNING", a.body["state"])
		require.Equal(t, http.StatusOK, c.do(t, http.MethodPost, "/jobs/"+id+"/cancel", "").status)
	})

	t.Run("Prefer wait outlives write timeout", func(t *testing.T) {
		c := newFreshClient(t, s.addr)
		a := c.doWith(t, http.MethodPost, "/jobs", `{"params":{"sleep_ms":600000}}`,
			http.Header{"Prefer": {"wait=2"}}) // the wait runs out past -write-timeout
		require.Equal(t, http.StatusAccepted, a.status, "%s", a.raw)
		require.Equal(t, "wait=2", a.header.Get("Preference-Applied"))
		id := a.body["job_id"].(string)
		require.Equal(t, http.StatusOK, c.do(t, http.MethodPost, "/jobs/"+id+"/cancel", "").status)
	})

	t.Run("infer outlives write timeout", func(t *testing.T) {
		c := newFreshClient(t, s.addr)
		a := c.do(t, http.MethodPost, "/infer", `{"task_id":"slow","params":{"sleep_ms":1500}}`) // past -write-timeout
		require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
		require.Equal(t, map[string]any{"sleep_ms": float64(1500)}, a.body["result"])
	})

	code, _ := s.stop(t)
	require.Equal(t, 0, code)
}

func TestTimeoutFlags(t *testing.T) {
	opts, err := parseFlags([]string{"-read-timeout", "2500", "-write-timeout", "0", "-idle-timeout", "70000"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 2500*time.Millisecond, opts.cfg.ReadTimeout)
	require.Equal(t, time.Duration(0), opts.cfg.WriteTimeout)
	require.Equal(t, 70*time.Second, opts.cfg.IdleTimeout)
	_, err = parseFlags([]string{"-idle-timeout", "-1"}, io.Discard)
	require.ErrorContains(t, err, "idle_timeout")

	hs := newHTTPServer(opts.cfg, http.NotFoundHandler())
	require.Equal(t, 2500*time.Millisecond, hs.ReadTimeout)
	require.Equal(t, 2500*time.Millisecond, hs.ReadHeaderTimeout) // never above ReadTimeout
	require.Equal(t, time.Duration(0), hs.WriteTimeout)
	require.Equal(t, 70*time.Second, hs.IdleTimeout)
	require.True(t, hs.DisableGeneralOptionsHandler, "the API answers OPTIONS * itself")

	opts.cfg.IdleTimeout, opts.cfg.ReadTimeout = 0, 0
	hs = newHTTPServer(opts.cfg, http.NotFoundHandler())
	require.Negative(t, hs.IdleTimeout, "zero means none, not net/http's fallback to ReadTimeout")
	require.Equal(t, maxReadHeaderTimeout, hs.ReadHeaderTimeout)
}

// TestOptionsStarLacksAllow pins OPTIONS *, which net/http's server
// answered itself (200, no Allow) before the API could: it is answered
// with the methods the API supports.
func TestOptionsStarLacksAllow(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	s := start(t, bin, "-model", "echo", "-grace", "0s")
	conn, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(guard)))
	_, err = io.WriteString(conn, "OPTIONS * HTTP/1.1\r\nHost: jobserver\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "GET, HEAD, OPTIONS, POST", resp.Header.Get("Allow"))
	require.Equal(t, "0", resp.Header.Get("Content-Length"))
	code, _ := s.stop(t)
	require.Equal(t, 0, code)
}
