package ledgertype

import "fmt"

// State is where a job stands in its lifecycle:
//
//	PENDING ──Start──► RUNNING ──Finish──► DONE
//	   │                  ├─────Fail────► FAILED
//	   │                  └────Timeout──► TIMEOUT
//	   └──── Finish / Fail / Timeout ────► (any terminal state)
//
// Only PENDING may enter RUNNING; any non-terminal state may terminate; the
// terminal states DONE, FAILED and TIMEOUT are absorbing. A State's number
// is what the durable stores keep in their state column.
type State int32

// The states, numbered as the stores keep them.
const (
	Pending  State = iota // admitted, not yet started
	Running               // picked up by a runner
	Done                  // finished with a result
	Failed                // ended with an error
	TimedOut              // ended by its deadline
)

// states is the one list of the states: each one's wire name and whether
// it is terminal, indexed by State.
var states = [...]struct {
	name     string
	terminal bool
}{
	Pending:  {"PENDING", false},
	Running:  {"RUNNING", false},
	Done:     {"DONE", true},
	Failed:   {"FAILED", true},
	TimedOut: {"TIMEOUT", true},
}

// States returns every state, in numeric order.
func States() []State {
	all := make([]State, len(states))
	for i := range all {
		all[i] = State(i)
	}
	return all
}

// Valid reports whether s is one of the states.
func (s State) Valid() bool { return uint32(s) < uint32(len(states)) }

// Terminal reports whether s is one of the absorbing states DONE, FAILED or
// TIMEOUT.
func (s State) Terminal() bool { return s.Valid() && states[s].terminal }

// String returns the wire name of the state: PENDING, RUNNING, DONE, FAILED
// or TIMEOUT; State(n) for a number that is no state.
func (s State) String() string {
	if s.Valid() {
		return states[s].name
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// ParseState returns the State whose wire name is name.
func ParseState(name string) (State, bool) {
	for s := range states {
		if states[s].name == name {
			return State(s), true
		}
	}
	return 0, false
}
