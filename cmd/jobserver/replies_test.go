package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// vmRSS returns the resident set of process pid, from /proc/PID/status.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err, "%q", line)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// slowReader asks for target on a loopback connection whose receive
// buffer is as small as the kernel allows, reads the reply's status line
// and header, and then reads nothing more: the server's write of a large
// body stalls until the connection is closed.
func slowReader(t *testing.T, addr, target string) (*http.Response, net.Conn) {
	t.Helper()
	d := net.Dialer{Timeout: guard, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(guard)))
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: jobserver\r\n\r\n", target)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	require.NoError(t, err)
	return resp, conn
}

// TestSlowResultReadersBoundedMemory pins the bug where replies carrying a
// result had no memory budget: 200 slow readers of an 8 MB result grew
// jobserver from 105 MB to over 1 GB. Here 40 readers that never read the
// body ask for an 8 MB result from a server with a 32 MiB reply budget:
// the server's resident set grows by less than twice the budget and some
// slack, however many readers there are, and the readers beyond the budget
// (each reply's share is twice the result) are answered 503 with
// Retry-After at once.
func TestSlowResultReadersBoundedMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("SKIPPED: no /proc/PID/status to read a resident set from: %v", err)
	}
	const (
		budget  = 32 << 20
		pad     = 8 << 20
		readers = 40
		slack   = 32 << 20 // the runtime's own growth: GC goals, stacks, buffers
	)
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	for _, store := range []string{"memory", "sqlite:" + filepath.Join(t.TempDir(), "jobs.db")} {
		t.Run(strings.Split(store, ":")[0], func(t *testing.T) {
			t.Parallel()
			slowReaders(t, bin, store, budget, pad, readers, slack)
		})
	}
}

// slowReaders is TestSlowResultReadersBoundedMemory on one store.
func slowReaders(t *testing.T, bin, store string, budget, pad, readers, slack int) {
	s := start(t, bin, "-model", "echo", "-grace", "0s", "-store", store, "-max-body-bytes", strconv.Itoa(pad+1024),
		"-max-reply-bytes-in-flight", strconv.Itoa(budget), "-write-timeout", "120000")
	c := newFreshClient(t, s.addr)
	body, err := json.Marshal(map[string]any{"params": map[string]string{"pad": strings.Repeat("x", pad)}})
	require.NoError(t, err)
	a := c.doWith(t, http.MethodPost, "/jobs", string(body), http.Header{"Prefer": {"wait=30"}})
	require.Equal(t, http.StatusOK, a.status, "%.200s", a.raw)
	id := a.body["job_id"].(string)
	target := "/jobs/" + id + "/result"
	a = c.do(t, http.MethodGet, target, "") // one whole read: the encoder's buffers exist
	require.Equal(t, http.StatusOK, a.status)
	require.Greater(t, len(a.raw), pad)
	a = answer{}

	pid := s.cmd.Process.Pid
	base := vmRSS(t, pid)
	var ok, busy int
	var conns []net.Conn
	for range readers {
		resp, conn := slowReader(t, s.addr, target)
		conns = append(conns, conn)
		switch resp.StatusCode {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			busy++
			require.Equal(t, "1", resp.Header.Get("Retry-After"))
			require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			var p struct{ Detail string }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
			require.Equal(t, "too many result bytes in flight", p.Detail)
		default:
			t.Fatalf("reader got %d", resp.StatusCode)
		}
	}
	grown := vmRSS(t, pid) - base
	t.Logf("resident set: %d MiB before the readers, +%d MiB with them; %d replies in flight, %d refused",
		base>>20, grown>>20, ok, busy)
	require.Less(t, grown, int64(2*budget+slack), "the resident set grew past twice the budget and slack")
	require.LessOrEqual(t, ok, budget/(2*pad), "replies in flight beyond the budget")
	require.GreaterOrEqual(t, busy, readers-budget/(2*pad), "readers beyond the budget are refused")

	for _, conn := range conns {
		conn.Close() // or the server's stop waits for their replies
	}
	code, log := s.stop(t)
	require.Equal(t, 0, code, "%s", tail(log, 2000))
}
