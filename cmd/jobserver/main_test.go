package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/pgtest"
)

// TestMain checks for leaked goroutines and removes the commands built;
// the tests on the PostgreSQL store get their server from package pgtest.
func TestMain(m *testing.M) { pgtest.Main(m, removeBuilt) }

// built holds the commands build compiled, once for the whole package, in
// one directory per set of packages.
var built struct {
	mu   sync.Mutex
	root string            // the parent of the directories; removeBuilt removes it
	dirs map[string]string // the packages joined by spaces -> their directory
}

// build compiles the module's commands pkgs, once per set for the whole
// package, and returns the directory holding them.
func build(t *testing.T, pkgs ...string) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	key := strings.Join(pkgs, " ")
	if dir, ok := built.dirs[key]; ok {
		return dir
	}
	if built.root == "" {
		root, err := os.MkdirTemp("", "jobserver-test-")
		require.NoError(t, err)
		built.root, built.dirs = root, map[string]string{}
	}
	dir := filepath.Join(built.root, strconv.Itoa(len(built.dirs)))
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH")
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)
	out, err := exec.Command(goTool, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	built.dirs[key] = dir
	return dir
}

// removeBuilt removes what build compiled.
func removeBuilt() {
	if built.root != "" {
		os.RemoveAll(built.root)
	}
}

// server is a running jobserver process.
type server struct {
	cmd     *exec.Cmd
	addr    string
	log     strings.Builder // the listening line and every later one; written by the drain goroutine
	drained chan struct{}   // closed when the log reaches EOF (the process exited)
}

// start runs the jobserver binary on a free loopback port and reads the
// chosen address from its "listening" log line, which its log keeps.
func start(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "jobserver"), append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &server{cmd: cmd, drained: make(chan struct{})}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			s.addr = line.Addr
			s.log.WriteString(sc.Text() + "\n")
			break
		}
	}
	if s.addr == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("jobserver never logged its address")
	}
	go func() {
		defer close(s.drained)
		for sc.Scan() {
			s.log.WriteString(sc.Text() + "\n")
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return s
}

// stop sends SIGTERM and returns the exit code and the remaining log.
func (s *server) stop(t *testing.T) (int, string) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	return s.exit(t)
}

// exit waits for the process to exit by itself and returns the exit code
// and the remaining log.
func (s *server) exit(t *testing.T) (int, string) {
	t.Helper()
	select {
	case <-s.drained: // the whole log, read before Wait closes the pipe
	case <-time.After(time.Minute): // only stops a broken test from hanging
		t.Fatal("jobserver did not exit within a minute") // the log is still being written
	}
	log := s.log.String()
	err := s.cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), log
	}
	require.NoError(t, err)
	return 0, log
}

func TestServerUnderLoad(t *testing.T) {
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver", "github.com/jobledger/jobledger/cmd/jobload")
	s := start(t, bin, "-model", "echo", "-workers", "2", "-grace", "200ms")

	for _, mode := range []string{"async", "sync"} {
		var out, errOut bytes.Buffer
		load := exec.Command(filepath.Join(bin, "jobload"), "-addr", s.addr, "-mode", mode, "-c", "4", "-d", "1500ms", "-n", "2000")
		load.Stdout, load.Stderr = &out, &errOut
		require.NoError(t, load.Run(), "%s\n%s", out.String(), errOut.String())
		require.Contains(t, out.String(), "errors=0")
		require.Contains(t, out.String(), "latency p50=")
		t.Logf("%s:\n%s", mode, out.String())
	}

	code, log := s.stop(t)
	require.Equal(t, 0, code)
	require.True(t, strings.Contains(log, `"msg":"stopped"`), "no stop line in the log, which ends:\n%s", tail(log, 2000))
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func TestServerShutdownWithJobsInFlight(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	s := start(t, bin, "-model", "echo", "-grace", "50ms")
	client := &http.Client{Timeout: time.Minute}

	resp, err := client.Post("http://"+s.addr+"/jobs", "application/json",
		strings.NewReader(`{"task_id":"long","params":{"sleep_ms":600000}}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)

	waited := make(chan []byte, 1)
	go func() {
		resp, err := client.Get(loc.String() + "/wait")
		if err != nil {
			waited <- []byte(err.Error())
			return
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		waited <- data
	}()
	// The waiter is blocked once the gauge says so.
	for i := 0; ; i++ {
		require.Less(t, i, 10_000, "waiter never blocked")
		resp, err := client.Get("http://" + s.addr + "/metrics")
		require.NoError(t, err)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(data), "jobledger_waiters 1") {
			break
		}
		runtime.Gosched()
	}

	code, log := s.stop(t)
	require.Equal(t, 0, code)
	body := <-waited
	require.Contains(t, string(body), `"state":"FAILED"`)
	require.Contains(t, string(body), `"error":"server shutting down"`)
	require.Contains(t, log, `"state":"FAILED"`)
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"workers": 3, "model": "echo", "async_timeout": 5000}`), 0o600))
	opts, err := parseFlags([]string{"-config", path, "-workers", "5", "-async-max-queue", "0", "-max-pixels", "100",
		"-max-reply-bytes-in-flight", "4096"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(4096), opts.cfg.MaxReplyBytesInFlight)
	require.Equal(t, 5, opts.cfg.Workers)
	require.Equal(t, "echo", opts.cfg.Model)
	require.Equal(t, 5*time.Second, opts.cfg.AsyncTimeout)
	require.Equal(t, 0, opts.cfg.AsyncMaxQueue)
	require.Equal(t, 100, opts.cfg.MaxPixels)
	require.Equal(t, "memory", opts.cfg.Store, "the default store")

	opts, err = parseFlags([]string{"-config", path, "-store", "memory", "-replica", "r2", "-lease", "700"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "memory", opts.cfg.Store)
	require.Equal(t, "r2", opts.cfg.Replica)
	require.Equal(t, 700*time.Millisecond, opts.cfg.Lease)
	_, err = parseFlags([]string{"-store", "redis"}, io.Discard)
	require.ErrorContains(t, err, `store: "redis" is not one of the accepted forms: memory`)

	for _, bad := range [][]string{
		{"-workers", "0"},
		{"-max-pixels", "0"},
		{"-max-reply-bytes-in-flight", "0"},
		{"-async-timeout", "-5"},
		{"-lease", "-1"},
		{"-model", "nope"},
		{"-config", filepath.Join(t.TempDir(), "missing.json")},
		{"stray"},
	} {
		_, err := parseFlags(bad, io.Discard)
		require.Error(t, err, "%v", bad)
	}
	require.NoError(t, os.WriteFile(path, []byte(`{"wokers": 3}`), 0o600))
	_, err = parseFlags([]string{"-config", path}, io.Discard)
	require.ErrorContains(t, err, "wokers")
}

// eventually polls cond every 20 ms until it holds; the bound (a minute)
// only stops a broken test from hanging.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 3000 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never happened: %s", what)
}
