//go:build !mutant_start_terminal

package jobtable

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
