// Package pgtest gives tests a PostgreSQL server: the one the environment
// variable JOBLEDGER_PG_DSN names (`make test` starts one with scripts/pg
// and sets it), or else one it starts itself with scripts/pg, the first
// time a test asks for a database, and stops when the tests end. It never
// skips: a test that needs a server and cannot have one fails.
//
// A package whose tests use it calls Main from its TestMain, and each test
// calls NewDatabase for an empty database of its own while it runs.
package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// EnvDSN names the server's DSN: a superuser's, in URL form
// (postgres://...).
const EnvDSN = "JOBLEDGER_PG_DSN"

var (
	mu      sync.Mutex
	adminDN string // the server's DSN, once known
	stop    func() // stops the server this package started, if any
	failed  error  // why no server could be had
)

// Main runs m, then each of cleanups, stops the server it started (if
// any), checks for leaked goroutines if every test passed (as
// goleak.VerifyTestMain), and exits.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	if err := dropSpares(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: dropping the databases kept: %v\n", err)
		code = 1
	}
	mu.Lock()
	if stop != nil {
		stop()
	}
	mu.Unlock()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// AdminDSN is the server's DSN, starting the server if needed; it fails t
// if there is none.
func AdminDSN(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if adminDN == "" && failed == nil {
		if adminDN = os.Getenv(EnvDSN); adminDN == "" {
			adminDN, stop, failed = start()
		}
	}
	if failed != nil {
		t.Fatalf("pgtest: %s is not set and no PostgreSQL could be started: %v", EnvDSN, failed)
	}
	return adminDN
}

// start starts a throwaway cluster with scripts/pg, as `make test` does.
func start() (string, func(), error) {
	s, stop, err := startServer()
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(os.Stderr, "pgtest: started PostgreSQL at %s (set %s to use another)\n", s.DSN, EnvDSN)
	return s.DSN, stop, nil
}

// moduleRoot is the nearest directory above the working directory (a
// package's, under go test) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// NewDatabase gives t an empty database of its own and returns its DSN.
// When t ends, the database's connections are ended and it is renamed and
// emptied (its schema dropped, its settings reset) for a later test of
// this process, or dropped where that fails: creating a database costs
// the server several times more. Main drops the databases kept.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s must be a postgres:// URL, not %q", EnvDSN, admin)
	}
	ctx := context.Background()
	name := takeSpare()
	if name == "" {
		name = newName()
		if err := adminExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	t.Cleanup(func() {
		kept, err := empty(ctx, admin, name)
		if err == nil {
			putSpare(kept)
			return
		}
		if kept == "" {
			kept = name
		}
		t.Logf("pgtest: database %s not kept: %v", kept, err)
		if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+kept+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return dsnOf(u, name)
}

var (
	spareMu sync.Mutex
	spare   []string // emptied databases for the next NewDatabase
)

func takeSpare() string {
	spareMu.Lock()
	defer spareMu.Unlock()
	if len(spare) == 0 {
		return ""
	}
	name := spare[len(spare)-1]
	spare = spare[:len(spare)-1]
	return name
}

func putSpare(name string) {
	spareMu.Lock()
	defer spareMu.Unlock()
	spare = append(spare, name)
}

// dropSpares drops the databases kept for later tests.
func dropSpares() error {
	spareMu.Lock()
	names := spare
	spare = nil
	spareMu.Unlock()
	mu.Lock()
	admin := adminDN
	mu.Unlock()
	var errs []error
	for _, name := range names {
		errs = append(errs, adminExec(context.Background(), admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"))
	}
	return errors.Join(errs...)
}

func newName() string { return "t_" + strings.ToLower(rand.Text()[:16]) }

func dsnOf(admin *url.URL, name string) string {
	u := *admin
	u.Path = "/" + name
	return u.String()
}

// empty ends the connections to database name, renames it (so that a
// client that still holds its old DSN cannot reach the next test's), drops
// its schema and resets its settings, and returns its new name.
func empty(ctx context.Context, admin, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	// The pids are read first and ended one by one: in one WHERE clause the
	// server may call pg_terminate_backend before it filters by database.
	// It waits up to its timeout (ms) for the backend to exit; one that
	// exited by itself meanwhile is simply gone from the next reading.
	for round := 0; ; round++ {
		rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name)
		if err != nil {
			return "", err
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return "", err
		}
		if len(pids) == 0 {
			break
		}
		if round == 10 {
			return "", fmt.Errorf("%d connections did not end", len(pids))
		}
		for _, pid := range pids {
			if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1, 10000)", pid); err != nil {
				return "", err
			}
		}
	}
	renamed := newName()
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" RENAME TO "+renamed); err != nil {
		return "", err
	}
	name = renamed
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" RESET ALL"); err != nil {
		return name, err
	}
	db, err := pgx.Connect(ctx, dsnOf(u, name))
	if err != nil {
		return name, err
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public AUTHORIZATION pg_database_owner"); err != nil {
		return name, err
	}
	// Anything outside the schema public (another schema, an object a test
	// made elsewhere) makes the database unfit to keep.
	var others int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname NOT IN ('public', 'pg_catalog', 'information_schema', 'pg_toast')
		AND nspname NOT LIKE 'pg\_temp\_%' AND nspname NOT LIKE 'pg\_toast\_temp\_%'`).Scan(&others); err != nil {
		return name, err
	}
	if others > 0 {
		return name, fmt.Errorf("%d schemas besides public", others)
	}
	return name, nil
}

// adminExec runs sql on a connection of its own to the server admin names.
func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", admin, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// Server is a PostgreSQL server of one test's own, which the test may
// restart (Private).
type Server struct {
	DSN    string // a superuser's DSN
	dir    string
	script string
}

// Private starts a server for t alone, with scripts/pg, stopped and
// removed when t ends. It takes some seconds: use it for a test that
// restarts its server, which would disturb the tests sharing AdminDSN's.
func Private(t testing.TB) *Server {
	t.Helper()
	s, stop, err := startServer()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(stop)
	return s
}

// startServer starts a cluster in a new temporary directory, and returns
// it and the function that stops it and removes the directory.
func startServer() (*Server, func(), error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "jobledger-pg-")
	if err != nil {
		return nil, nil, err
	}
	s := &Server{dir: dir, script: filepath.Join(root, "scripts", "pg")}
	stop := func() {
		_, _ = s.run(time.Minute, "stop", dir)
		_ = os.RemoveAll(dir)
	}
	out, err := s.run(5*time.Minute, "start", dir)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("scripts/pg start: %w", err)
	}
	fields := strings.Fields(out)
	if len(fields) == 0 {
		stop()
		return nil, nil, errors.New("scripts/pg start printed no DSN")
	}
	s.DSN = fields[len(fields)-1]
	return s, stop, nil
}

// Restart stops the server with shutdown mode ("fast" or "immediate"),
// waits pause, and starts it again on the same port.
func (s *Server) Restart(mode string, pause time.Duration) error {
	_, err := s.run(2*time.Minute, "restart", s.dir, mode, fmt.Sprintf("%.3f", pause.Seconds()))
	return err
}

// run runs scripts/pg with args, bounded by limit, and returns its output.
func (s *Server) run(limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.script, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	return string(out), err
}
