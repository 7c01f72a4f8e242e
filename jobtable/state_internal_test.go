package jobtable

import (
	"testing"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

func TestCanTransition(t *testing.T) {
	// The whole state machine: every other pair is refused.
	allowed := map[[2]State]bool{
		{ledgertype.Pending, ledgertype.Running}:  true,
		{ledgertype.Pending, ledgertype.Done}:     true,
		{ledgertype.Pending, ledgertype.Failed}:   true,
		{ledgertype.Pending, ledgertype.TimedOut}: true,
		{ledgertype.Running, ledgertype.Done}:     true,
		{ledgertype.Running, ledgertype.Failed}:   true,
		{ledgertype.Running, ledgertype.TimedOut}: true,
	}
	for _, from := range ledgertype.States() {
		for _, to := range ledgertype.States() {
			want := allowed[[2]State{from, to}]
			if got := canTransition(from, to); got != want {
				t.Errorf("canTransition(%v, %v) = %t, want %t", from, to, got, want)
			}
		}
	}
}
