package jobtable

import "testing"

func TestCanTransition(t *testing.T) {
	// The whole state machine: every other pair is refused.
	allowed := map[[2]State]bool{
		{Pending, Running}:  true,
		{Pending, Done}:     true,
		{Pending, Failed}:   true,
		{Pending, TimedOut}: true,
		{Running, Done}:     true,
		{Running, Failed}:   true,
		{Running, TimedOut}: true,
	}
	all := []State{Pending, Running, Done, Failed, TimedOut}
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]State{from, to}]
			if got := canTransition(from, to); got != want {
				t.Errorf("canTransition(%v, %v) = %t, want %t", from, to, got, want)
			}
		}
	}
}

func TestStateNames(t *testing.T) {
	for s, name := range map[State]string{Pending: "PENDING", Running: "RUNNING", Done: "DONE", Failed: "FAILED", TimedOut: "TIMEOUT"} {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", int32(s), s.String(), name)
		}
		if got, ok := ParseState(name); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %t", name, got, ok)
		}
	}
	if got := State(42).String(); got != "State(42)" {
		t.Errorf("State(42).String() = %q", got)
	}
	if _, ok := ParseState("done"); ok {
		t.Error("ParseState accepted a lower-case name")
	}
}
