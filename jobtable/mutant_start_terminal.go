//go:build mutant_start_terminal

package jobtable

// Mutant: Start is allowed from any state, so a terminal job can be
// restarted and terminal states are no longer absorbing.
func canTransition(from, to State) bool {
	switch {
	case to == Running:
		return true
	case from.Terminal():
		return false
	default:
		return to.Terminal()
	}
}
