package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/pgtest"
)

// secret is the password of these tests' DSNs: no output may hold it.
const secret = "sekrit"

// storeArgs are the two ways to name a store: the flag, and the key of a
// config file.
func storeArgs(t *testing.T, store string) map[string][]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	data, err := json.Marshal(map[string]string{"store": store})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return map[string][]string{"flag": {"-store", store}, "config file": {"-config", path}}
}

// TestStorePasswordNotInStartupErrors pins the bug where a PostgreSQL
// password was printed in every startup error ("opening the store
// \"postgres://postgres:pw@...\""), from the flag and from the config
// file: the error and the log hold xxxxx in its place, whatever the
// failure (no server, a DSN that does not parse, a value that is not a
// URL).
func TestStorePasswordNotInStartupErrors(t *testing.T) {
	for _, tc := range []struct{ name, store, want string }{
		{"no server", "postgres://postgres:" + secret + "@127.0.0.1:1/jobs?connect_timeout=2", "postgres://postgres:xxxxx@127.0.0.1:1/jobs"},
		{"password parameter", "postgres://postgres@127.0.0.1:1/jobs?connect_timeout=2&password=" + secret, "password=xxxxx"},
		{"bad port", "postgres://postgres:" + secret + "@127.0.0.1:port/jobs", "xxxxx"},
		{"keywords", "postgres:host=127.0.0.1 password=" + secret, "password=xxxxx"},
	} {
		for how, args := range storeArgs(t, tc.store) {
			t.Run(tc.name+" by "+how, func(t *testing.T) {
				var log bytes.Buffer
				err := run(append([]string{"-listen", "127.0.0.1:0"}, args...), slog.New(slog.NewJSONHandler(&log, nil)))
				require.Error(t, err)
				require.NotContains(t, err.Error(), secret)
				require.Contains(t, err.Error(), tc.want)
				require.NotContains(t, log.String(), secret)
			})
		}
	}
}

// TestStorePasswordNotServed: with a PostgreSQL store named with a
// password, by the flag or the config file, neither the listening line nor
// any later log line, /healthz or /metrics holds the password.
func TestStorePasswordNotServed(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.NewDatabase(t)) // the test server trusts loopback: any password will do
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), secret)
	bin := build(t, "github.com/jobledger/jobledger/cmd/jobserver")
	for how, args := range storeArgs(t, u.String()) {
		t.Run(how, func(t *testing.T) {
			s := start(t, bin, append([]string{"-grace", "0s"}, args...)...)
			c := newFreshClient(t, s.addr)
			for _, path := range []string{"/healthz", "/metrics"} {
				a := c.do(t, http.MethodGet, path, "")
				require.Equal(t, http.StatusOK, a.status, "%s", a.raw)
				require.NotContains(t, string(a.raw), secret, path)
			}
			code, log := s.stop(t)
			require.Equal(t, 0, code, "%s", log)
			require.True(t, strings.Contains(log, `"store":"postgres://postgres:xxxxx@`), "the listening line names the store, redacted:\n%s", log)
			require.NotContains(t, log, secret)
		})
	}
}
