package jobtable

import "github.com/jobledger/jobledger/ledger/ledgertype"

// State is where a job stands in its lifecycle; the states and their rules
// are package ledgertype's.
type State = ledgertype.State

// Snapshot is a consistent view of one job: taken under its lock while the
// job is live, and for a terminal job its final snapshot, which never
// changes. Stats is a cheap view of the table for metrics. Submission is
// what SubmitKeyed keeps beside a request. All three are the contract's
// (package ledgertype).
type (
	Snapshot   = ledgertype.Snapshot
	Stats      = ledgertype.Stats
	Submission = ledgertype.Submission
)

// canTransition is the whole state machine as a pure function: it reports
// whether a job in state from may move to state to. The table consults it
// inside the job's critical section; tests and fuzzing drive it directly.
func canTransition(from, to State) bool {
	switch {
	case from.Terminal():
		return false // terminal states are absorbing
	case to == ledgertype.Running:
		return from == ledgertype.Pending // only PENDING may enter RUNNING
	default:
		return to.Terminal() // any non-terminal state may terminate
	}
}
