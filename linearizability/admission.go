package linearizability

import (
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// AdmissionModel returns the global specification of the queue depth for a
// table whose bound is maxQueue: the counter-only projection of a history
// (see admissionProjection). Its state is the depth. Its Step is the
// clauses of admissionClauses (clause.go):
//
//   - An accepted Submit needs depth < maxQueue and adds one.
//   - A rejected Submit (ErrQueueFull) is legal only at the bound.
//   - A winning terminal call removes one, and needs depth > 0.
//   - A Submit answers nothing else.
//   - SetDepth starts a segment at a depth known exactly (see
//     admissionSegments).
//   - An Unknown Submit or terminal call takes effect if it can; placed
//     after everything else it has none.
//
// The counter couples every job, so the projection is checked as one
// history: "submit(a) accepted, submit(b) accepted" at maxQueue 1 is
// illegal, yet each job on its own is fine. Check decides this model with
// the sweep of admission_decide.go, which agrees with porcupine on it and
// scales with the history; porcupine stays the reference.
func AdmissionModel(maxQueue int) porcupine.Model {
	return admissionModel(maxQueue, rules{})
}

// admissionModel is AdmissionModel with the clauses r in force.
func admissionModel(maxQueue int, r rules) porcupine.Model {
	limit := max(maxQueue, 0)
	return porcupine.Model{
		Partition: admissionSegments,
		Init:      func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			return stepAdmission(r, limit, state.(int), input.(Input), output.(Output))
		},
		Hash: func(state any) uint64 { return uint64(state.(int)) },
		DescribeOperation: func(input, output any) string {
			return Describe(input.(Input), output.(Output))
		},
		DescribeState: func(state any) string { return fmt.Sprintf("depth %d of %d", state.(int), limit) },
	}
}

func stepAdmission(r rules, limit, depth int, in Input, out Output) (bool, int) {
	switch {
	case in.Kind == SetDepth:
		return true, in.Depth
	case in.Kind == Submit:
		switch out.Outcome {
		case OK:
			return r.holds(admAdmitBelowBound, depth < limit), depth + 1
		case QueueFull:
			return r.holds(admRejectOnlyAtBound, depth >= limit), depth
		case Unknown:
			if depth < limit {
				return true, depth + 1
			}
			return true, depth
		}
	case in.Kind.Terminal():
		switch out.Outcome {
		case OK:
			return r.holds(admDecrementAboveZero, depth > 0), depth - 1
		case Unknown:
			return true, max(depth-1, 0)
		}
	}
	// The projection holds Submits with every outcome, and only winning or
	// unknown terminal calls.
	return r.holds(admOutcomeKnown, false), depth
}

// admissionProjection keeps the operations that move or test the depth:
// every Submit, every winning terminal call, and, for a job with no
// winning terminal call seen, its first terminal call with an Unknown
// outcome (it may have won).
func admissionProjection(history []porcupine.Operation) []porcupine.Operation {
	won := make(map[string]bool)
	for _, op := range history {
		in := op.Input.(Input)
		if in.Kind.Terminal() && op.Output.(Output).Outcome == OK {
			won[in.ID] = true
		}
	}
	maybe := make(map[string]bool)
	var p []porcupine.Operation
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Kind == Submit && out.Outcome == TenantFull:
			// The tenant's bound refused it: the depth played no part
			// (TenantAdmissionModel judges it).
		case in.Kind == Submit:
			p = append(p, op)
		case in.Kind.Terminal() && out.Outcome == OK:
			p = append(p, op)
		case in.Kind.Terminal() && out.Outcome == Unknown && !won[in.ID] && !maybe[in.ID]:
			maybe[in.ID] = true
			p = append(p, op)
		}
	}
	return p
}

// admissionSegments cuts a projected history at its quiescent points,
// where every operation called before the point has returned and none
// after it has been called. The depth there is known exactly: the
// accepted submits minus the winning terminal calls so far, whatever
// order they took. Each segment after the first starts with a SetDepth of
// that depth, so the segments can be checked on their own; together they
// are linearizable exactly when the whole is. A violation is then
// reported, and drawn, within one segment rather than the whole run.
// minSegment is the fewest operations a segment holds before it may be cut:
// porcupine checks each partition in a goroutine of its own, and a
// goroutine per handful of operations costs more than it saves.
const minSegment = 256

func admissionSegments(history []porcupine.Operation) [][]porcupine.Operation {
	ops := slices.Clone(history)
	sortByCall(ops)
	var segs [][]porcupine.Operation
	var cur []porcupine.Operation
	depth, lastReturn := 0, int64(-1<<63)
	for _, op := range ops {
		if len(cur) >= minSegment && op.Call > lastReturn {
			segs = append(segs, cur)
			cur = []porcupine.Operation{{
				ClientId: op.ClientId,
				Input:    Input{Kind: SetDepth, Depth: depth},
				Output:   Output{Outcome: OK},
				Call:     op.Call - 1,
				Return:   op.Call - 1,
			}}
		}
		cur = append(cur, op)
		lastReturn = max(lastReturn, op.Return)
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Kind == Submit && out.Outcome == OK:
			depth++
		case in.Kind.Terminal() && out.Outcome == OK:
			depth--
		}
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}
