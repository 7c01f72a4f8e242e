package jobapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

func TestNewRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	mem, err := ledger.NewMemory[jobapi.Request, json.RawMessage](ledger.Config{MaxQueue: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, mem.Close()) })
	_, err = jobapi.New(mem, jobapi.Config{}, jobapi.Options{})
	require.ErrorIs(t, err, jobapi.ErrInvalidConfig)
	_, err = jobapi.New(nil, jobapi.DefaultConfig(), jobapi.Options{})
	require.ErrorIs(t, err, jobapi.ErrInvalidConfig, "no ledger")
}

// TestLedgerConfig: the ledger's limits are the config's.
func TestLedgerConfig(t *testing.T) {
	t.Parallel()
	cfg := jobapi.DefaultConfig()
	require.Equal(t, ledger.Config{MaxQueue: cfg.AsyncMaxQueue, JobTTL: cfg.AsyncJobTTL, MaxCompleted: cfg.AsyncMaxCompleted}, cfg.LedgerConfig())
}
