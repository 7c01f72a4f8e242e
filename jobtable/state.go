package jobtable

import "fmt"

// State is where a job stands in its lifecycle:
//
//	PENDING ──Start──► RUNNING ──Finish──► DONE
//	   │                  ├─────Fail────► FAILED
//	   │                  └────Timeout──► TIMEOUT
//	   └──── Finish / Fail / Timeout ────► (any terminal state)
//
// Only PENDING may enter RUNNING; any non-terminal state may terminate; the
// terminal states DONE, FAILED and TIMEOUT are absorbing.
type State int32

const (
	Pending  State = iota // admitted, not yet started
	Running               // picked up by a runner
	Done                  // finished with a result
	Failed                // ended with an error
	TimedOut              // ended by its deadline
)

var stateNames = [...]string{
	Pending:  "PENDING",
	Running:  "RUNNING",
	Done:     "DONE",
	Failed:   "FAILED",
	TimedOut: "TIMEOUT",
}

// String returns the wire name of the state: PENDING, RUNNING, DONE, FAILED
// or TIMEOUT.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Terminal reports whether s is one of the absorbing states DONE, FAILED or
// TIMEOUT.
func (s State) Terminal() bool { return s == Done || s == Failed || s == TimedOut }

// ParseState returns the State whose wire name is name.
func ParseState(name string) (State, bool) {
	for s, n := range stateNames {
		if n == name {
			return State(s), true
		}
	}
	return 0, false
}

// canTransition is the whole state machine as a pure function: it reports
// whether a job in state from may move to state to. The table consults it
// inside the job's critical section; tests and fuzzing drive it directly.
func canTransition(from, to State) bool {
	switch {
	case from.Terminal():
		return false // terminal states are absorbing
	case to == Running:
		return from == Pending // only PENDING may enter RUNNING
	default:
		return to.Terminal() // any non-terminal state may terminate
	}
}
