package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runToExit runs the jobserver binary in bin with args until it exits by
// itself (a start the store refuses, -repair), within a minute, and
// returns its exit code and its output.
func runToExit(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "jobserver"), args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	require.NoError(t, err, "%s", out)
	return 0, string(out)
}

// submitEcho submits a job of the echo model that sleeps ms and returns
// the reply.
func submitEcho(t *testing.T, c *freshClient, ms int) answer {
	t.Helper()
	return c.do(t, "POST", "/jobs", fmt.Sprintf(`{"params":{"sleep_ms":%d}}`, ms))
}

// listed is the number of jobs GET /jobs lists, all on one page.
func listed(t *testing.T, c *freshClient) int {
	t.Helper()
	a := c.do(t, "GET", "/jobs?limit=1000", "")
	require.Equal(t, 200, a.status, "%s", a.raw)
	jobs, _ := a.body["jobs"].([]any)
	return len(jobs)
}

// TestSQLiteFileFaults runs the server on a SQLite file that is removed,
// left unlocked or damaged behind its back. (Regressions: after the file
// was removed, the server answered 202 for jobs a restart no longer had;
// with the lock file removed, a second server opened the file and failed
// the first one's running jobs; a file whose log was removed or cut short,
// or truncated beside its log, started with 0 or 15 of its 30 jobs,
// silently.)
func TestSQLiteFileFaults(t *testing.T) {
	t.Parallel()
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	serve := func(db string) []string {
		return []string{"-model", "echo", "-async-max-queue", "64", "-grace", "100ms", "-store", "sqlite:" + db}
	}
	refused := func(t *testing.T, db, want string) {
		t.Helper()
		code, out := runToExit(t, bin, append([]string{"-listen", "127.0.0.1:0"}, serve(db)...)...)
		require.Equal(t, 2, code, "%s", out)
		require.Contains(t, out, want)
		require.Contains(t, out, "run: jobserver -store sqlite:"+db+" -repair", "the refusal names the repair")
	}
	repair := func(t *testing.T, db, want string) {
		t.Helper()
		code, out := runToExit(t, bin, "-store", "sqlite:"+db, "-repair")
		require.Equal(t, 0, code, "%s", out)
		require.Contains(t, out, want)
		t.Logf("jobserver -repair:\n%s", out)
	}

	t.Run("file removed", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "jobs.db")
		s := start(t, bin, serve(db)...)
		c := newFreshClient(t, s.addr)
		require.Equal(t, 202, submitEcho(t, c, 0).status)
		require.NoError(t, os.Remove(db))
		for range 3 {
			a := submitEcho(t, c, 0)
			require.Equal(t, 503, a.status, "never a 202 for a job the next start will not find: %s", a.raw)
			require.NotEmpty(t, a.header.Get("Retry-After"))
		}
		code, log := s.stop(t)
		require.Equal(t, 0, code, "%s", log)
		require.Contains(t, log, "job store failed")
		require.Contains(t, log, db+" was removed")

		refused(t, db, "lacks commits it acknowledged")
		repair(t, db, "acknowledged commits are lost")
		s = start(t, bin, serve(db)...)
		require.Equal(t, 202, submitEcho(t, newFreshClient(t, s.addr), 0).status, "repaired, it serves")
		code, log = s.stop(t)
		require.Equal(t, 0, code, "%s", log)
	})

	t.Run("lock file removed", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "jobs.db")
		first := start(t, bin, serve(db)...)
		c := newFreshClient(t, first.addr)
		a := submitEcho(t, c, 60_000)
		require.Equal(t, 202, a.status, "%s", a.raw)
		id, _ := a.body["job_id"].(string)
		require.NoError(t, os.Remove(db+".lock"))

		code, out := runToExit(t, bin, append([]string{"-listen", "127.0.0.1:0"}, serve(db)...)...)
		require.Equal(t, 2, code, "%s", out)
		require.Contains(t, out, "in use by another store")
		code, out = runToExit(t, bin, "-store", "sqlite:"+db, "-repair")
		require.Equal(t, 2, code, "%s", out)
		require.Contains(t, out, "in use by another store", "no repair under a running server")
		a = c.do(t, "GET", "/jobs/"+id, "")
		require.Equal(t, 200, a.status)
		require.NotEqual(t, "FAILED", a.body["state"], "the first server's job was left alone: %s", a.raw)
		require.Equal(t, 202, submitEcho(t, c, 0).status, "and the first server serves on")
		code, log := first.stop(t)
		require.Equal(t, 0, code, "%s", log)
	})

	for name, tc := range map[string]struct {
		damage       func(t *testing.T, db string)
		want, report string
	}{
		"log removed": {
			func(t *testing.T, db string) { require.NoError(t, os.Remove(db+"-wal")) },
			"acknowledged commits are missing", "acknowledged commits are lost",
		},
		"database truncated, log intact": {
			func(t *testing.T, db string) { require.NoError(t, os.Truncate(db, 0)) },
			"is empty but its log", "moved the log of the empty database file",
		},
		"log cut in half": {
			func(t *testing.T, db string) {
				info, err := os.Stat(db + "-wal")
				require.NoError(t, err)
				require.NoError(t, os.Truncate(db+"-wal", info.Size()/2))
			},
			"acknowledged commits are missing", "acknowledged commits are lost",
		},
	} {
		t.Run(name, func(t *testing.T) {
			const jobs = 30
			db := filepath.Join(t.TempDir(), "jobs.db")
			s := start(t, bin, serve(db)...)
			c := newFreshClient(t, s.addr)
			for range jobs {
				require.Equal(t, 202, submitEcho(t, c, 0).status)
			}
			require.Equal(t, jobs, listed(t, c))
			require.NoError(t, s.cmd.Process.Kill())
			s.exit(t)
			tc.damage(t, db)

			refused(t, db, tc.want)
			refused(t, db, tc.want) // a refusal changes nothing that would let the next start pass
			repair(t, db, tc.report)
			s = start(t, bin, serve(db)...)
			require.Less(t, listed(t, newFreshClient(t, s.addr)), jobs, "repaired, it serves what is left")
			code, log := s.stop(t)
			require.Equal(t, 0, code, "%s", log)
		})
	}
}

// TestRepairNeedsSQLite: -repair on a store that is not a SQLite file is
// refused, naming the form it needs.
func TestRepairNeedsSQLite(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, store := range []string{"memory", "postgres://postgres@127.0.0.1:1/jobs"} {
		err := run([]string{"-store", store, "-repair"}, log)
		require.ErrorContains(t, err, "-repair needs -store sqlite:PATH", store)
	}
}
