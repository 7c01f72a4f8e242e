// Package pgtest gives tests a PostgreSQL server: the one the environment
// variable JOBLEDGER_PG_DSN names (`make test` starts one with scripts/pg
// and sets it), or else one it starts itself with scripts/pg, the first
// time a test asks for a database, and stops when the tests end. It never
// skips: a test that needs a server and cannot have one fails.
//
// A package whose tests use it calls Main from its TestMain, and each test
// calls NewDatabase for a database of its own, dropped when the test ends.
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

// NewDatabase creates an empty database for t alone, dropped when t ends,
// and returns its DSN.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	ctx := context.Background()
	name := "t_" + strings.ToLower(rand.Text()[:16])
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connecting to %s: %v", admin, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: CREATE DATABASE %s: %v", name, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: connecting to drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: DROP DATABASE %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: %s must be a postgres:// URL, not %q", EnvDSN, admin)
	}
	u.Path = "/" + name
	return u.String()
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
