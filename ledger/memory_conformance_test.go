package ledger_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertest"
)

// TestMemoryConformance runs the conformance suite on the memory store. It
// does not survive a restart, so the restart rules are skipped.
func TestMemoryConformance(t *testing.T) {
	ledgertest.Run(t, ledgertest.Store{
		Open: func(t *testing.T, cfg ledger.Config) ledger.Ledger[string, string] {
			l, err := ledger.NewMemory[string, string](cfg)
			require.NoError(t, err)
			return l
		},
	})
}
