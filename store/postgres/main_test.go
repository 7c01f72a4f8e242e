package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// dsnEnv names the server the tests use: a superuser's DSN in URL form
// (postgres://...). `make test` starts a throwaway cluster with scripts/pg
// and sets it; where it is not set, TestMain starts one of its own the
// same way, and fails, never skips, if it cannot.
const dsnEnv = "JOBLEDGER_PG_DSN"

// adminDSN is the server's DSN, on its maintenance database.
var adminDSN string

var ctx = context.Background()

func TestMain(m *testing.M) {
	adminDSN = os.Getenv(dsnEnv)
	stop := func() {}
	if adminDSN == "" {
		var err error
		adminDSN, stop, err = startCluster()
		if err != nil {
			fmt.Fprintf(os.Stderr, "store/postgres: %s is not set and no PostgreSQL could be started: %v\n", dsnEnv, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// startCluster starts a throwaway cluster with scripts/pg, as `make test`
// does, and returns its DSN and how to stop it.
func startCluster() (string, func(), error) {
	script, err := filepath.Abs("../../scripts/pg")
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "jobledger-pg-")
	if err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd := exec.Command(script, "stop", dir)
		cmd.Stderr = os.Stderr
		_ = cmd.Run()
		_ = os.RemoveAll(dir)
	}
	tctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(tctx, script, "start", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("scripts/pg start: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		stop()
		return "", nil, fmt.Errorf("scripts/pg start printed no DSN")
	}
	fmt.Fprintf(os.Stderr, "store/postgres: started PostgreSQL at %s (set %s to use another)\n", lines[len(lines)-1], dsnEnv)
	return lines[len(lines)-1], stop, nil
}

// newDatabase creates an empty database for t alone, dropped when t ends,
// and returns its DSN.
func newDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + strings.ToLower(rand.Text()[:16])
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatalf("connecting to %s: %v", adminDSN, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("CREATE DATABASE %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, adminDSN)
		if err != nil {
			t.Errorf("connecting to drop %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("DROP DATABASE %s: %v", name, err)
		}
	})
	u, err := url.Parse(adminDSN)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL, not %q", dsnEnv, adminDSN)
	}
	u.Path = "/" + name
	return u.String()
}
