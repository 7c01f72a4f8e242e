package wire_test

import (
	"testing"

	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

// TestStatesMatch holds wire's named states to ledgertype's list.
func TestStatesMatch(t *testing.T) {
	named := []wire.State{wire.Pending, wire.Running, wire.Done, wire.Failed, wire.TimedOut}
	all := ledgertype.States()
	if len(named) != len(all) {
		t.Fatalf("wire names %d states, ledgertype lists %d", len(named), len(all))
	}
	for i, s := range all {
		if w := named[i]; string(w) != s.String() || !w.Valid() || w.Terminal() != s.Terminal() {
			t.Errorf("wire state %q (Valid %t, Terminal %t), ledgertype %v (Terminal %t)", w, w.Valid(), w.Terminal(), s, s.Terminal())
		}
	}
	if s := wire.State("done"); s.Valid() || s.Terminal() {
		t.Errorf("%q: Valid %t, Terminal %t", s, s.Valid(), s.Terminal())
	}
}
