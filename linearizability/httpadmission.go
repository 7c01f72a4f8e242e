package linearizability

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// endClients is how many rows of the visualization the derived End
// operations share.
const endClients = 8

// endClientBase is the client id of the first such row: far above any
// recording client's.
const endClientBase = 1 << 20

// HTTPAdmissionModel returns the global specification of the queue bound as
// clients of the HTTP API can check it. The terminal transition, which frees
// a slot, happens inside the server unseen; so each admitted job gets a
// derived End operation (see httpAdmissionProjection) that may take effect
// at any time from its POST's call to the return of the first operation
// that saw the job terminal or gone. The state is the set of jobs admitted
// and not yet ended. Its Step is the clauses of httpAdmissionClauses
// (clause.go):
//
//   - an admission (a 202, or a waiting submit's 200 or 202) needs fewer
//     than maxQueue jobs in the set and adds the job;
//   - 429 needs maxQueue jobs in the set;
//   - End removes its job, which must be in the set;
//   - a read that saw a job PENDING or RUNNING needs it in the set: of
//     each job's such reads the projection keeps the one called last, which
//     bounds its End from below (a waiting submit's 202 after its wait is
//     such a read where retention evicts nothing);
//   - a POST answers nothing but an admission and 429.
//
// This is sound: in a correct server the real terminal transitions, at
// their real times, are one such linearization. It is weaker than the table
// level's model by exactly what clients cannot see: a slot freed long before
// anyone looked is only known to be free once someone looked. CheckHTTP
// decides it with the sweep of admission_decide.go, as AdmissionModel.
func HTTPAdmissionModel(maxQueue int) porcupine.Model {
	return httpAdmissionModel(maxQueue, rules{})
}

// httpAdmissionModel is HTTPAdmissionModel with the clauses r in force.
func httpAdmissionModel(maxQueue int, r rules) porcupine.Model {
	limit := max(maxQueue, 0)
	return porcupine.Model{
		Partition: httpAdmissionSegments,
		Init:      func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			return stepHTTPAdmission(r, limit, state.(string), input.(Input), output.(Output))
		},
		Hash: func(state any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(state.(string)))
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			return Describe(input.(Input), output.(Output))
		},
		DescribeState: func(state any) string {
			live := liveSet(state.(string))
			for i, id := range live {
				live[i] = short(id)
			}
			return fmt.Sprintf("%d of %d live: %s", len(live), limit, strings.Join(live, " "))
		},
	}
}

// The live set is a string of sorted job ids joined by liveSep, so that the
// state is a comparable value.
const liveSep = "\x00"

func liveSet(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, liveSep)
}

func stepHTTPAdmission(r rules, limit int, state string, in Input, out Output) (bool, string) {
	live := liveSet(state)
	switch {
	case admitted(in, out):
		// An id admitted twice is HTTPJobModel's to reject (SubmitOnce),
		// which CheckHTTP runs first: a check here too would be vacuous.
		if !r.holds(hadmAdmitBelowBound, len(live) < limit) {
			return false, state
		}
		live = append(live, out.ID)
		slices.Sort(live)
		return true, strings.Join(live, liveSep)
	case in.Kind.posts() && out.Outcome == QueueFull:
		return r.holds(hadmRejectOnlyAtBound, len(live) >= limit), state
	case sawLive(in, out):
		return r.holds(hadmReadSeesLive, slices.Contains(live, in.ID)), state
	case in.Kind == End:
		i := slices.Index(live, in.ID)
		if i < 0 {
			return r.holds(hadmEndOnlyLive, false), state
		}
		return true, strings.Join(slices.Delete(live, i, i+1), liveSep)
	}
	return r.holds(hadmOutcomeKnown, false), state
}

// sawEnded reports whether op saw its job (jobOf) terminal or gone.
func sawEnded(in Input, out Output) bool {
	switch {
	case in.Kind == SubmitWait:
		return out.Outcome == OK && out.State.Terminal()
	case in.Kind == Submit || in.Kind == SubmitKeyed || in.Kind == KeyedAdmit || in.Kind == End:
		return false
	case out.Outcome == NotFound:
		return true
	case in.Kind == Cancel:
		return out.Outcome == OK || out.Outcome == Terminal
	case in.Kind == Snapshot || in.Kind == Wait || in.Kind == Result:
		return HasView(in.Kind, out.Outcome) && out.State.Terminal()
	}
	return false
}

// sawLive reports whether op is a read that saw its job not terminal. A
// SubmitWaitRead of a 202 is one (the projection derives it only where
// retention evicts nothing); a SubmitWait itself is not: its 200 must be
// terminal, which is the job model's to check.
func sawLive(in Input, out Output) bool {
	switch in.Kind {
	case Snapshot, Wait, Result:
		return HasView(in.Kind, out.Outcome) && !out.State.Terminal()
	case SubmitWaitRead:
		return out.Outcome == Deadline
	}
	return false
}

// httpAdmissionProjection keeps every POST of k.ops whose outcome is known,
// and adds one End per admitted job, from its POST's call to the earliest
// return of an operation that saw it terminal or gone (seen, endsSeenBy;
// pending forever if none did).
// Of each job's reads that saw it live it keeps the one called last.
//
// A POST whose reply was lost may have admitted a job nobody can name, which
// holds a slot until it ends unseen: from its call on, a 429 proves nothing,
// and the 429s called after it are left out. It cannot make a 202 legal, so
// the 202s stay.
//
// A keyed POST (SubmitKeyed) counts as a POST for its 429 and a lost
// reply, but for a lost one called after its key was held for good, which
// created nothing (lostOnHeldKey); its 202s and 422s are left out, and
// each job that keyed 202s name is admitted once, by its KeyedAdmit, which
// k.ops holds beside them (httpkeys.go).
//
// A POST with Prefer: wait=N (SubmitWait) counts as a POST: its 200 and its
// 202 admitted the job, its 429 is a 429. Its 200 saw the job terminal. Its
// 202 after the wait saw the job live when the wait ran out, unless the job
// was evicted before the wait began (submitwait.go): with k.retained (no
// eviction), its SubmitWaitRead is kept as a read that saw the job live;
// otherwise it says nothing of the job's end.
func httpAdmissionProjection(k keyedHistory, seen map[string]int64) []porcupine.Operation {
	history, retained := k.ops, k.retained
	lastLive := make(map[string]porcupine.Operation)
	unknownFrom := int64(Pending)
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		read := op
		if r, ok := submitWaitRead(op); ok && retained {
			read = r
		}
		if rin := read.Input.(Input); sawLive(rin, out) {
			if l, ok := lastLive[rin.ID]; !ok || read.Call > l.Call {
				lastLive[rin.ID] = read
			}
		}
		if in.Kind.posts() && out.Outcome == Unknown && !lostOnHeldKey(k.held, op) {
			unknownFrom = min(unknownFrom, op.Call)
		}
	}
	var p []porcupine.Operation
	n := 0
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if !in.Kind.posts() && in.Kind != KeyedAdmit {
			continue
		}
		switch {
		case in.Kind == SubmitKeyed && (out.Outcome == OK || out.Outcome == KeyConflict):
			// A keyed 202 may be a replay, which admits nothing: the job's
			// admission is its KeyedAdmit. A 422 changes nothing.
		case out.Outcome == QueueFull:
			if op.Call < unknownFrom {
				p = append(p, op)
			}
		case admitted(in, out):
			p = append(p, op)
			ret := endSeenBy(seen, out.ID)
			p = append(p, porcupine.Operation{
				ClientId: endClientBase + n%endClients,
				Input:    Input{Kind: End, ID: out.ID},
				Output:   Output{Outcome: OK},
				Call:     op.Call,
				Return:   max(ret, op.Call),
			})
			n++
			if l, ok := lastLive[out.ID]; ok {
				p = append(p, l)
			}
		case out.Outcome == Unknown:
		default: // no POST answers this: kept, for the model to reject
			p = append(p, op)
		}
	}
	return p
}

// endsSeenBy returns, for each job some operation of history saw terminal
// or gone, the earliest return of such an operation: the job's terminal
// transition, which the server makes unseen, happened before it.
func endsSeenBy(history []porcupine.Operation) map[string]int64 {
	seen := make(map[string]int64)
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if sawEnded(in, out) {
			id := jobOf(in, out)
			if r, ok := seen[id]; !ok || op.Return < r {
				seen[id] = op.Return
			}
		}
	}
	return seen
}

// endSeenBy is the time by which job id had ended as seen says, or Pending
// when nobody saw it end.
func endSeenBy(seen map[string]int64, id string) int64 {
	if r, ok := seen[id]; ok {
		return r
	}
	return Pending
}

// httpAdmissionSegments cuts the projection at its quiescent points, End
// operations included: there every job admitted so far has ended in any
// linearization, so the live set is empty and each segment starts from the
// initial state.
func httpAdmissionSegments(history []porcupine.Operation) [][]porcupine.Operation {
	ops := slices.Clone(history)
	sortByCall(ops)
	var segs [][]porcupine.Operation
	var cur []porcupine.Operation
	lastReturn := int64(-1 << 63)
	for _, op := range ops {
		if len(cur) >= minSegment && op.Call > lastReturn {
			segs = append(segs, cur)
			cur = nil
		}
		cur = append(cur, op)
		lastReturn = max(lastReturn, op.Return)
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}
