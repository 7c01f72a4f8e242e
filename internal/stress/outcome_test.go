package stress

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// TestStateOfEveryTableState: each state of the table is recorded as the
// history's state with the same wire name, the name the models and history
// files use.
func TestStateOfEveryTableState(t *testing.T) {
	for _, s := range []jobtable.State{ledgertype.Pending, ledgertype.Running, ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		st := stateOf(s)
		require.Equal(t, s.String(), st.String())
		require.Equal(t, s.Terminal(), st.Terminal(), s.String())
	}
}
