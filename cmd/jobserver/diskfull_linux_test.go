package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it when the test ends, after the cleanups registered later (a
// server on it stops first). Mounting takes root, as CI has: elsewhere the
// test is skipped, loudly, and in CI (CI=true) it fails instead.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	cannot := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs in CI, which runs as root: %s", why)
		}
		t.Skipf("SKIPPED, NOT TESTED: this test mounts a tmpfs and cannot here (%s); run it as root", why)
	}
	if os.Geteuid() != 0 {
		cannot("not root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		cannot(err.Error())
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting the tmpfs %s: %v", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// fill writes the file path until its file system has no room left, and
// returns how much it wrote.
func fill(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(filepath.Dir(path), &st))
	total := 0
	for _, chunk := range []int{64 << 10, 4 << 10, 512} {
		buf := make([]byte, chunk)
		for range int(st.Blocks)*int(st.Bsize)/chunk + 1 {
			n, err := f.Write(buf)
			total += n
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			require.NoError(t, err)
		}
	}
	_, err = f.Write([]byte{0})
	require.ErrorIs(t, err, syscall.ENOSPC, "the file system is full")
	return total
}

// metric returns the value of the series name in the server's /metrics.
func metric(t *testing.T, c *freshClient, name string) float64 {
	t.Helper()
	a := c.do(t, http.MethodGet, "/metrics", "")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(a.raw)
	require.NotNil(t, m, "no series %s", name)
	v, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return v
}

// TestDiskFullRecovers pins the wedge of a brief full disk on the real
// binary and store: a running job whose end, and a pending one whose
// start, the store failed for want of room stayed live for good, the
// queue full (429 to every submit) and /healthz at 200 "ok", until a
// restart. With the file system full (a tmpfs the test fills) the server
// now reports the failing writes, and once there is room again it ends
// both jobs with their models' results and admits submits, by itself.
func TestDiskFullRecovers(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, 4<<20)
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	s := start(t, bin, "-model", "echo", "-workers", "1", "-async-max-queue", "2", "-async-timeout", "120000",
		"-grace", "100ms", "-store", "sqlite:"+filepath.Join(dir, "jobs.db"))
	t.Cleanup(func() {
		if t.Failed() && s.cmd.ProcessState == nil {
			_, log := s.stop(t)
			t.Logf("the server's log:\n%s", tail(log, 4000))
		}
	})
	c := newFreshClient(t, s.addr)

	submit := func(body string) string {
		t.Helper()
		a := c.do(t, http.MethodPost, "/jobs", body)
		require.Equal(t, http.StatusAccepted, a.status, "%s", a.raw)
		return a.body["job_id"].(string)
	}
	// Its model returns 2 s from now, with the file system full by then.
	running := submit(`{"task_id":"running","params":{"sleep_ms":2000}}`)
	pending := submit(`{"task_id":"pending"}`)
	eventually(t, "the first job runs", func() bool {
		return c.do(t, http.MethodGet, "/jobs/"+running, "").body["state"] == "RUNNING"
	})
	require.Equal(t, "PENDING", c.do(t, http.MethodGet, "/jobs/"+pending, "").body["state"])

	filler := filepath.Join(dir, "filler")
	t.Logf("filler: %d bytes", fill(t, filler))
	// The running job's end fails as its model returns, and the pending
	// job's start as it gets the worker: six failures give both time.
	eventually(t, "writes fail", func() bool {
		return metric(t, c, "jobledger_store_write_failures_total") >= 6
	})
	h := c.do(t, http.MethodGet, "/healthz", "")
	require.Equal(t, http.StatusOK, h.status)
	require.Equal(t, "degraded", h.body["status"], "%s", h.raw)
	require.Contains(t, h.body["store"], "database or disk is full")
	require.Equal(t, 1.0, metric(t, c, "jobledger_store_writes_failing"))
	require.Equal(t, 2.0, metric(t, c, "jobledger_queue_depth"))
	require.Equal(t, http.StatusTooManyRequests, c.do(t, http.MethodPost, "/jobs", `{"task_id":"full"}`).status)
	require.Equal(t, "RUNNING", c.do(t, http.MethodGet, "/jobs/"+running, "").body["state"])
	require.Equal(t, "PENDING", c.do(t, http.MethodGet, "/jobs/"+pending, "").body["state"])

	require.NoError(t, os.Remove(filler))
	for id, params := range map[string]any{running: map[string]any{"sleep_ms": 2000.0}, pending: map[string]any{}} {
		a := c.do(t, http.MethodGet, "/jobs/"+id+"/wait?timeout=30000", "")
		require.Equal(t, "DONE", a.body["state"], "%s", a.raw)
		r := c.do(t, http.MethodGet, "/jobs/"+id+"/result", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		require.Equal(t, params, r.body["result"], "the model's result: its params")
	}
	require.Equal(t, 0.0, metric(t, c, "jobledger_queue_depth"))
	require.Equal(t, map[string]any{"status": "ok"}, c.do(t, http.MethodGet, "/healthz", "").body)
	require.Equal(t, 0.0, metric(t, c, "jobledger_store_writes_failing"))
	next := submit(`{"task_id":"next"}`)
	require.Equal(t, "DONE", c.do(t, http.MethodGet, "/jobs/"+next+"/wait?timeout=30000", "").body["state"])
	require.Equal(t, 3.0, metric(t, c, `jobledger_jobs_completed_total{state="DONE"}`), "each job ended once")

	code, log := s.stop(t)
	require.Equal(t, 0, code, "%s", tail(log, 2000))
	require.NotContains(t, log, "job left live")
	require.Contains(t, log, `"msg":"job start failed in the store; retrying","job_id":"`+pending+`"`)
	require.Contains(t, log, `"msg":"job store failed","op":"end","job_id":"`+running+`"`)
	require.Equal(t, 3, strings.Count(log, `"msg":"job ended"`), "%s", tail(log, 2000))
}
