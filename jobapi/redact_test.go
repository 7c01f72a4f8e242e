package jobapi_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// TestHealthzRedactsTheListener: a listener's error that quotes the store's
// URL shows in /healthz with its password redacted.
func TestHealthzRedactsTheListener(t *testing.T) {
	t.Parallel()
	mem, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 8})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, mem.Close()) })
	store := &listeningBytes{Ledger: mem}
	store.set(false, time.Unix(1, 0), errors.New("dial postgres://postgres:sekrit@127.0.0.1:1/jobs: refused"))
	h := newHarnessOn(t, ledger.WithCodecs(ledger.Ledger[[]byte, []byte](store), jobapi.RequestJSON{}, jobapi.ResultJSON{}), jobapi.Options{}, echoConfig)
	r := h.get("/healthz")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "down since 1970-01-01T00:00:01Z: dial postgres://postgres:xxxxx@127.0.0.1:1/jobs: refused", r.Body["listener"])
}
