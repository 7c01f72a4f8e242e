package lossyfs_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestMain runs the SQLite child of TestSQLiteCommitsSurviveOnlyWhenSynced
// when asked to, in a process of its own: the test process serves the
// mount, and must not mmap the -shm file on it.
func TestMain(m *testing.M) {
	if dsn := os.Getenv("LOSSYFS_SQLITE_CHILD"); dsn != "" {
		os.Exit(sqliteChild(dsn))
	}
	os.Exit(m.Run())
}

const childRows = 20

// sqliteChild commits childRows rows, one transaction each, saying "ack"
// on stdout after each commit returned, then waits to be killed.
func sqliteChild(dsn string) int {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (n INTEGER)"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range childRows {
		if _, err := db.Exec("INSERT INTO t VALUES (?)", i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("ack", i)
	}
	_, _ = os.Stdin.Read(make([]byte, 1)) // until killed
	return 0
}

// TestSQLiteCommitsSurviveOnlyWhenSynced has a child process commit rows
// one transaction at a time in SQLite's WAL mode on the mount, kills it
// with SIGKILL after the last commit returned, cuts the power, and counts
// what the disk holds: every row with synchronous=FULL, which fsyncs the
// WAL at each commit; not all with NORMAL (the WAL is synced at
// checkpoints only) or OFF (never).
func TestSQLiteCommitsSurviveOnlyWhenSynced(t *testing.T) {
	for _, tt := range []struct {
		sync string
		all  bool
	}{{"FULL", true}, {"NORMAL", false}, {"OFF", false}} {
		t.Run(tt.sync, func(t *testing.T) {
			d := mount(t)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "LOSSYFS_SQLITE_CHILD="+
				fmt.Sprintf("file:%s?_pragma=journal_mode(WAL)&_pragma=synchronous(%s)", d.path("db"), tt.sync))
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			defer stdin.Close()
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			killed := false
			defer func() {
				if !killed {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}()
			acks := 0
			for sc := bufio.NewScanner(out); acks < childRows && sc.Scan(); {
				acks++
			}
			require.Equal(t, childRows, acks, "the child's acknowledgements")
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			killed = true

			d.fs.Cut()
			require.NoError(t, d.fs.Unmount())
			d.fs = nil
			n := countRows(t, filepath.Join(d.dir, "db"))
			if tt.all {
				require.Equal(t, childRows, n)
			} else {
				require.Less(t, n, childRows, "synchronous=%s kept every commit", tt.sync)
			}
		})
	}
}

// countRows counts the rows of table t in the SQLite file at path, on the
// durable directory itself (not mounted); -1 if the table is not there.
func countRows(t *testing.T, path string) int {
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Logf("%s: %v", path, err)
		return -1
	}
	return n
}
