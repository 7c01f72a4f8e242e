package linearizability

import "fmt"

// State is a job's state as a history records it. It is the checker's own
// copy of the ledger's five states, named by their wire names, so that the
// models and the history format depend on no ledger: a driver converts
// what its ledger reports by the state's name.
//
// Only PENDING may enter RUNNING; any non-terminal state may terminate; the
// terminal states DONE, FAILED and TIMEOUT are absorbing. The zero value is
// PENDING.
type State uint8

// The states.
const (
	StatePending  State = iota // admitted, not yet started
	StateRunning               // picked up by a runner
	StateDone                  // finished with a result
	StateFailed                // ended with an error
	StateTimedOut              // ended by its deadline
)

var stateNames = [...]string{
	StatePending:  "PENDING",
	StateRunning:  "RUNNING",
	StateDone:     "DONE",
	StateFailed:   "FAILED",
	StateTimedOut: "TIMEOUT",
}

// String returns the wire name of the state: PENDING, RUNNING, DONE, FAILED
// or TIMEOUT.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// Terminal reports whether s is one of the absorbing states DONE, FAILED or
// TIMEOUT.
func (s State) Terminal() bool { return s == StateDone || s == StateFailed || s == StateTimedOut }

// ParseState returns the State whose wire name is name.
func ParseState(name string) (State, bool) {
	s, ok := parseName(stateNames[:], name)
	return State(s), ok
}
