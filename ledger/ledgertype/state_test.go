package ledgertype_test

import (
	"testing"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

func TestStates(t *testing.T) {
	want := []struct {
		s        ledgertype.State
		name     string
		terminal bool
	}{
		{ledgertype.Pending, "PENDING", false},
		{ledgertype.Running, "RUNNING", false},
		{ledgertype.Done, "DONE", true},
		{ledgertype.Failed, "FAILED", true},
		{ledgertype.TimedOut, "TIMEOUT", true},
	}
	all := ledgertype.States()
	if len(all) != len(want) {
		t.Fatalf("States() = %v, want %d states", all, len(want))
	}
	for i, w := range want {
		s := all[i]
		if s != w.s || int(s) != i {
			t.Errorf("States()[%d] = %d, want %d", i, int32(s), int32(w.s))
		}
		if !s.Valid() || s.String() != w.name || s.Terminal() != w.terminal {
			t.Errorf("%d: Valid %t, String %q, Terminal %t; want true, %q, %t", i, s.Valid(), s.String(), s.Terminal(), w.name, w.terminal)
		}
		if got, ok := ledgertype.ParseState(w.name); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %t", w.name, got, ok)
		}
	}
}

func TestNoState(t *testing.T) {
	for _, s := range []ledgertype.State{-1, 5, 42} {
		if s.Valid() || s.Terminal() {
			t.Errorf("State(%d): Valid %t, Terminal %t", int32(s), s.Valid(), s.Terminal())
		}
	}
	if got := ledgertype.State(42).String(); got != "State(42)" {
		t.Errorf("State(42).String() = %q", got)
	}
	for _, name := range []string{"done", "", "State(0)", "CANCELLED"} {
		if _, ok := ledgertype.ParseState(name); ok {
			t.Errorf("ParseState(%q) accepted it", name)
		}
	}
}
