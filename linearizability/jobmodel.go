package linearizability

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// jobState is the sequential state of one job: what the ledger holds for
// it, and whether it is gone. It is a comparable value; Step returns a new
// one and never changes its argument.
type jobState struct {
	Submitted bool
	// Gone is set when an operation found no job: legal only once the job
	// is terminal (eviction), and permanent, since ids are never reused.
	Gone    bool
	State   State
	Started bool
	Taken   bool
	TaskID  string
	Req     string
	Res     string // the result of the winning Finish
	Err     string // the message of the winning Fail or Timeout
}

// JobModel is the per-job sequential specification, partitioned by job id.
// Jobs are independent of one another except through the queue depth,
// which AdmissionModel checks; so a history is linearizable for the jobs
// exactly when each job's sub-history is.
//
// Its Step is the clauses of jobClauses (clause.go), one rule each; in
// short, one job at a time:
//   - Submit creates the job PENDING with its task id and request; an id is
//     created once.
//   - Start succeeds only from PENDING; otherwise ErrNotPending.
//   - Finish, Fail and Timeout succeed only from a non-terminal state,
//     which makes exactly one of them win; the others get ErrTerminal.
//     Terminal states are absorbing.
//   - TakeRequest returns the submitted request once, while the job is not
//     terminal; then ErrRequestTaken. On a terminal job it returns
//     ErrTerminal, taken or not: the terminal transition drops the request.
//   - A keyed replay (SubmitKeyed, OK, Replayed; tableKeyed) reads the job
//     it names: legal only once the job was submitted, while it is not
//     gone, and only if the job was created with the replay's task id and
//     request.
//   - Snapshot, Wait and Result see the current state, task id, error
//     message, and started/completed marks; Result returns the result of
//     the winning Finish when DONE, ErrNotDone with the view otherwise. Wait
//     returns nil only for a terminal state, and its deadline only with a
//     non-terminal one.
//   - Eviction is internal to Submit and never seen directly: an operation
//     that finds no job is legal only when the job is terminal (or already
//     gone), and from then on the job stays gone.
//   - An operation with an Unknown outcome (pending forever) applies its
//     effect where that is possible; "no effect" is the linearization that
//     places it after everything else.
var JobModel = jobModel(rules{})

// jobModel is JobModel with the clauses r in force.
func jobModel(r rules) porcupine.Model {
	return porcupine.Model{
		Partition: partitionByJob,
		Init:      func() any { return jobState{} },
		Step: func(state, input, output any) (bool, any) {
			return stepJob(r, state.(jobState), input.(Input), output.(Output))
		},
		Equal: func(a, b any) bool { return a.(jobState) == b.(jobState) },
		Hash:  func(state any) uint64 { return hashJob(state.(jobState)) },
		DescribeOperation: func(input, output any) string {
			return Describe(input.(Input), output.(Output))
		},
		DescribeState: func(state any) string { return describeJob(state.(jobState)) },
	}
}

func stepJob(r rules, s jobState, in Input, out Output) (bool, jobState) {
	if in.Kind == Submit {
		// Only an accepted Submit names a job (jobKey).
		if !r.holds(jobSubmitOnce, !s.Submitted) || !r.holds(jobOutcomeKnown, out.Outcome == OK) {
			return false, s
		}
		return true, jobState{Submitted: true, State: StatePending, TaskID: in.TaskID, Req: in.Value}
	}
	if out.Outcome == Unknown {
		return true, unknownEffect(s, in)
	}
	if out.Outcome == NotFound {
		if !s.Submitted || s.Gone {
			return true, s
		}
		if !r.holds(jobNoEvictNonTerminal, s.State.Terminal()) {
			return false, s // a live job went missing
		}
		s.Gone = true
		return true, s
	}
	if !r.holds(jobNoJobBeforeSubmit, s.Submitted) || !r.holds(jobGoneForGood, !s.Gone) {
		return false, s
	}

	switch in.Kind {
	case TakeRequest:
		switch out.Outcome {
		case OK:
			if !r.holds(jobRequestOnce, !s.Taken) ||
				!r.holds(jobTerminalReleasesRequest, !s.State.Terminal()) ||
				!r.holds(jobTakeReturnsRequest, out.Value == s.Req) {
				return false, s
			}
			s.Taken = true
			return true, s
		case RequestTaken:
			return r.holds(jobRequestTakenOnlyAfterTake, s.Taken) &&
				r.holds(jobRequestTakenOnlyLive, !s.State.Terminal()), s
		case Terminal:
			return r.holds(jobTakeRefusedOnlyIfTerminal, s.State.Terminal()), s
		}
	case Start:
		switch out.Outcome {
		case OK:
			if !r.holds(jobRunningFromPending, s.State == StatePending) {
				return false, s
			}
			s.State, s.Started = StateRunning, true
			return true, s
		case NotPending:
			return r.holds(jobNotPendingOnlyIfNotPending, s.State != StatePending), s
		}
	case Finish, Fail, Timeout:
		switch out.Outcome {
		case OK:
			if !r.holds(jobTerminalAbsorbing, !s.State.Terminal()) {
				return false, s
			}
			return true, terminate(s, in)
		case Terminal:
			return r.holds(jobEndRefusedOnlyIfTerminal, s.State.Terminal()), s
		}
	case Snapshot:
		if out.Outcome == OK {
			return viewMatches(r, s, out), s
		}
	case Wait:
		switch out.Outcome {
		case OK:
			return r.holds(jobWaitTerminal, s.State.Terminal()) && viewMatches(r, s, out), s
		case Deadline:
			return r.holds(jobWaitDeadlineOnlyLive, !s.State.Terminal()) && viewMatches(r, s, out), s
		}
	case SubmitKeyed:
		// A replay (tableKeyed keeps no other keyed submit as one) reads
		// the job it names: submitted, not gone, and created with the
		// replay's body.
		if out.Outcome == OK && out.Replayed {
			return r.holds(jobReplayMatchesCreation, in.TaskID == s.TaskID && in.Value == s.Req), s
		}
	case Result:
		switch out.Outcome {
		case OK:
			return r.holds(jobResultOnlyWhenDone, s.State == StateDone) &&
				r.holds(jobResultIsWinners, out.Value == s.Res) && viewMatches(r, s, out), s
		case NotDone:
			return r.holds(jobNotDoneOnlyIfNotDone, s.State != StateDone) && viewMatches(r, s, out), s
		}
	}
	return r.holds(jobOutcomeKnown, false), s
}

// terminate is the winning terminal call in.
func terminate(s jobState, in Input) jobState {
	s.State = in.Kind.terminalState()
	if in.Kind == Finish {
		s.Res = in.Value
	} else {
		s.Err = in.Value
	}
	return s
}

// unknownEffect applies the effect an operation with an unknown outcome
// would have had if it took effect now.
func unknownEffect(s jobState, in Input) jobState {
	if !s.Submitted || s.Gone {
		return s
	}
	switch {
	case in.Kind == TakeRequest && !s.State.Terminal():
		s.Taken = true
	case in.Kind == Start && s.State == StatePending:
		s.State, s.Started = StateRunning, true
	case in.Kind.Terminal() && !s.State.Terminal():
		s = terminate(s, in)
	}
	return s
}

// viewMatches reports whether the snapshot fields of out are those of s,
// as far as the clauses r in force ask.
func viewMatches(r rules, s jobState, out Output) bool {
	return r.holds(jobReadState, out.State == s.State) &&
		r.holds(jobReadTaskID, out.TaskID == s.TaskID) &&
		r.holds(jobReadErr, out.Err == s.Err) &&
		r.holds(jobReadStarted, out.Started == s.Started) &&
		r.holds(jobReadCompleted, out.Completed == s.State.Terminal())
}

func hashJob(s jobState) uint64 {
	h := fnv.New64a()
	var flags byte
	for i, b := range []bool{s.Submitted, s.Gone, s.Started, s.Taken} {
		if b {
			flags |= 1 << i
		}
	}
	h.Write([]byte{flags, byte(s.State)})
	for _, f := range []string{s.TaskID, s.Req, s.Res, s.Err} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func describeJob(s jobState) string {
	if !s.Submitted {
		return "unsubmitted"
	}
	var b strings.Builder
	b.WriteString(s.State.String())
	if s.Gone {
		b.WriteString(" evicted")
	}
	if s.Taken {
		b.WriteString(" taken")
	}
	if s.Res != "" {
		fmt.Fprintf(&b, " res=%q", s.Res)
	}
	if s.Err != "" {
		fmt.Fprintf(&b, " err=%q", s.Err)
	}
	return b.String()
}

// jobKey returns the job an operation belongs to, or "" for one that names
// no job (a rejected or unknown Submit, a SetDepth).
func jobKey(op porcupine.Operation) string {
	in := op.Input.(Input)
	switch in.Kind {
	case Submit, SubmitWait:
		if out := op.Output.(Output); admitted(in, out) {
			return out.ID
		}
		return ""
	case SubmitKeyed:
		// A keyed 202 reads the job it names (the job's creation is its
		// KeyedAdmit), as a table-level replay does (a table-level keyed
		// creation is a Submit by then: tableKeyed); a 422, a 429 or a
		// lost reply names none.
		if out := op.Output.(Output); out.Outcome == OK {
			return out.ID
		}
		return ""
	case KeyedAdmit:
		return op.Output.(Output).ID
	case SetDepth:
		return ""
	}
	return in.ID
}

// jobPartition is one job's sub-history.
type jobPartition struct {
	ID  string
	Ops []porcupine.Operation
}

// jobPartitions splits history by job, in the order of the job ids.
// Operations that name no job belong to no partition: they change no job.
func jobPartitions(history []porcupine.Operation) []jobPartition {
	byID := make(map[string][]porcupine.Operation)
	for _, op := range history {
		if k := jobKey(op); k != "" {
			byID[k] = append(byID[k], op)
		}
	}
	keys := make([]string, 0, len(byID))
	for k := range byID {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]jobPartition, len(keys))
	for i, k := range keys {
		parts[i] = jobPartition{ID: k, Ops: byID[k]}
	}
	return parts
}

func partitionByJob(history []porcupine.Operation) [][]porcupine.Operation {
	parts := jobPartitions(history)
	out := make([][]porcupine.Operation, len(parts))
	for i, p := range parts {
		out[i] = p.Ops
	}
	return out
}
