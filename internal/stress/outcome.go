package stress

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/linearizability"
)

// How a reply of a Ledger becomes the Output a history records: its error
// classified into an Outcome, and, where that outcome carries a snapshot,
// the snapshot's view in the checker's own terms. The HTTP client maps
// the wire's replies itself (httpclient.go).

// outputWithView classifies err and, where the outcome carries a snapshot,
// fills the view fields from snap.
func outputWithView(k linearizability.Kind, err error, snap jobtable.Snapshot) linearizability.Output {
	out := linearizability.Output{Outcome: outcomeOf(k, err)}
	if linearizability.HasView(k, out.Outcome) {
		out = view(out, snap)
	}
	return out
}

// view returns out with the fields of snap filled in.
func view(out linearizability.Output, snap jobtable.Snapshot) linearizability.Output {
	out.State = stateOf(snap.State)
	out.TaskID = snap.TaskID
	if snap.Err != nil {
		out.Err = snap.Err.Error()
	}
	out.Started = !snap.StartedAt.IsZero()
	out.Completed = !snap.CompletedAt.IsZero()
	return out
}

// stateOf is the history's State for a state of the table: the one with
// the same wire name. Every state of the table has one, so a miss is a
// programming error.
func stateOf(s jobtable.State) linearizability.State {
	st, ok := linearizability.ParseState(s.String())
	if !ok {
		panic(fmt.Sprintf("stress: the table's state %v has no history state", s))
	}
	return st
}

// outcomeOf classifies err for an operation of kind k. Only Wait reports
// its caller's deadline as an outcome; for any other operation a context
// error means the call was abandoned and its effect is unknown.
func outcomeOf(k linearizability.Kind, err error) linearizability.Outcome {
	o := classify(err)
	if o == linearizability.Deadline && k != linearizability.Wait {
		return linearizability.Unknown
	}
	return o
}

// classify maps an error from a Ledger to an Outcome; Unknown when the
// error says nothing about the ledger.
func classify(err error) linearizability.Outcome {
	switch {
	case err == nil:
		return linearizability.OK
	case errors.Is(err, jobtable.ErrQueueFull):
		return linearizability.QueueFull
	case errors.Is(err, jobtable.ErrNotFound):
		return linearizability.NotFound
	case errors.Is(err, jobtable.ErrNotPending):
		return linearizability.NotPending
	case errors.Is(err, jobtable.ErrTerminal):
		return linearizability.Terminal
	case errors.Is(err, jobtable.ErrNotDone):
		return linearizability.NotDone
	case errors.Is(err, jobtable.ErrRequestTaken):
		return linearizability.RequestTaken
	case errors.Is(err, jobtable.ErrKeyConflict):
		return linearizability.KeyConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return linearizability.Deadline
	}
	return linearizability.Unknown
}
