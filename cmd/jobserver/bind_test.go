package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/sqlite"
)

// TestBusyPortKeepsRecoveredJobs pins the start-up order where the store
// was opened and jobapi.New ran before the listener was bound: New had already started the runners
// of the jobs the SQLite file held PENDING when the bind failed, and the
// store was closed under them without a shutdown, so an acknowledged job
// could end FAILED. A port already taken must stop the server before it
// touches a job: the job stays PENDING, and the next server runs it.
func TestBusyPortKeepsRecoveredJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "sqlite:" + filepath.Join(dir, "jobs.db")
	quiet := slog.New(slog.DiscardHandler)
	cfg := config.Default()
	cfg.Model, cfg.Store, cfg.Workers = "echo", store, 1

	// A server leaves one job PENDING on the file: it waits behind a
	// running one for the one worker when a shutdown with no grace comes.
	srv, closeStore, err := startServer(cfg, quiet)
	require.NoError(t, err)
	submit := func(body string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		require.Equal(t, http.StatusAccepted, rec.Code, "%s", rec.Body)
		return strings.Split(rec.Header().Get("Location"), "/")[1]
	}
	running := submit(`{"params":{"sleep_ms":600000}}`)
	eventually(t, "the first job runs", func() bool {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/jobs/"+running, nil))
		return strings.Contains(rec.Body.String(), `"state":"RUNNING"`)
	})
	pending := submit(`{"task_id":"kept"}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = srv.Shutdown(ctx) // no grace: the pending job is left for the next start
	require.NoError(t, closeStore())

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	addrFile := filepath.Join(dir, "addr")
	var log lockedBuffer
	err = run([]string{"-listen", busy.Addr().String(), "-store", store, "-model", "echo",
		"-addr-file", addrFile}, slog.New(slog.NewJSONHandler(&log, nil)))
	require.ErrorContains(t, err, "address already in use")
	require.NotContains(t, log.String(), "recovered pending jobs", "no job was touched")
	_, err = os.Stat(addrFile)
	require.ErrorIs(t, err, os.ErrNotExist, "no address written for a server that never listened")

	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "jobs.db"), ledger.Config{MaxQueue: 16}, sqlite.Options{})
	require.NoError(t, err)
	snap, err := st.Snapshot(context.Background(), pending)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Pending, snap.State, "error %v", snap.Err)
	require.NoError(t, st.Close())

	// The next server on the file runs it.
	srv, closeStore, err = startServer(cfg, quiet)
	require.NoError(t, err)
	defer closeStore()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/jobs/"+pending+"/wait?timeout=30000", nil))
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	require.Contains(t, rec.Body.String(), `"state":"DONE"`)
	require.NoError(t, srv.Shutdown(context.Background()))
}

// lockedBuffer is a bytes.Buffer that a logger may write while a test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
