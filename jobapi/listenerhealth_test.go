package jobapi_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// listeningBytes is a store of bytes with a listener whose health a test
// sets. mu guards the fields below it.
type listeningBytes struct {
	ledger.Ledger[[]byte, []byte]

	mu    sync.Mutex
	ok    bool
	since time.Time
	err   error
}

func (l *listeningBytes) ListenerHealth() (bool, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ok, l.since, l.err
}

func (l *listeningBytes) set(ok bool, since time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ok, l.since, l.err = ok, since, err
}

// TestHealthzReportsTheListener: a store's listener, found behind the
// codecs, shows in /healthz, which stays 200 while it is down and says
// since when and why, and in the gauge jobledger_store_listener_up; a
// store without one shows in neither.
func TestHealthzReportsTheListener(t *testing.T) {
	t.Parallel()
	mem, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 8})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, mem.Close()) })
	store := &listeningBytes{Ledger: mem, ok: true, since: time.Unix(1, 0)}
	h := newHarnessOn(t, ledger.WithCodecs(ledger.Ledger[[]byte, []byte](store), jobapi.RequestJSON{}, jobapi.ResultJSON{}), jobapi.Options{}, echoConfig)

	r := h.get("/healthz")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, map[string]any{"status": "ok", "listener": "up"}, r.Body)
	require.Equal(t, 1.0, h.metric("jobledger_store_listener_up"))

	store.set(false, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), errors.New("connection refused"))
	r = h.get("/healthz")
	require.Equal(t, http.StatusOK, r.Status, "the server still serves")
	require.Equal(t, map[string]any{"status": "ok", "listener": "down since 2030-01-02T03:04:05Z: connection refused"}, r.Body)
	require.Equal(t, 0.0, h.metric("jobledger_store_listener_up"))

	plain := newHarness(t, nil, echoConfig)
	require.Equal(t, map[string]any{"status": "ok"}, plain.get("/healthz").Body)
	m, err := plain.api.Metrics(t.Context())
	require.NoError(t, err)
	require.NotContains(t, m, "jobledger_store_listener_up")
}
