package linearizability

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// CancelError is the error a job cancelled through the HTTP API carries
// (docs/http.md).
const CancelError = "canceled"

// httpJobState is what clients of the HTTP API know of one job: the last
// state observed, and what that observation fixed. Every step the server
// takes unseen (take, start, finish, fail, timeout, eviction) is folded into
// the next observation, which must be reachable from this state along the
// state machine. It is a comparable value.
type httpJobState struct {
	Submitted bool
	Gone      bool // a 404 was seen: permanent, ids are never reused
	State     State
	// Started is a lower bound: a view with started_at, or RUNNING, was
	// seen. A terminal state reached from PENDING may or may not be
	// started.
	Started bool
	// Final is set once a full view of a terminal state fixed its error
	// and started mark; a terminal state seen only through a result or a
	// 409 leaves them open.
	Final  bool
	TaskID string
	Req    string // the submitted params: echo's result when DONE
	Err    string
}

// HTTPJobModel is the per-job specification of the HTTP API, partitioned by
// job id, for a server running the echo model. The runner's steps happen
// inside the server, unseen, at any time between observed operations; the
// model lets them happen, but only along the state machine. Its Step is the
// clauses of httpJobClauses (clause.go); in short:
//
//   - POST /jobs (202) creates the job PENDING with its task id and params.
//   - A snapshot (GET /jobs/{id}, a wait) is legal when its view is
//     reachable from the last one: PENDING, then RUNNING (started), then
//     one terminal state, absorbing, whose error and started mark never
//     change once seen; completed_at set exactly when terminal; an error
//     only on FAILED and TIMEOUT.
//   - GET /jobs/{id}/result: 200 only with DONE and exactly the submitted
//     params (echo returns them), as often as asked; 409 carries a state
//     other than DONE, reachable from the last one.
//   - POST /jobs/{id}/cancel: 200 is a Fail that won, so the job was not
//     terminal when it landed (never after a terminal state was seen), and
//     it is FAILED "canceled" from then on; 409 carries a terminal state.
//   - A wait returns a terminal view, or a non-terminal one only on its own
//     timeout; the recorder then places the read after that timeout.
//   - POST /jobs with Prefer: wait=N admits the job, as a 202 does, and
//     its wait is a read of its own (SubmitWaitRead, submitwait.go): a
//     200 carries a terminal view or, DONE, the result; a 202 after the
//     wait says the job was not terminal when the wait ran out (or was
//     evicted before it began).
//   - A terminal view carries expires_at exactly when the server knows
//     its TTL (CheckConfig.KnowsTTL); a live view never does.
//   - 404 is legal for any submitted job (it may have ended unseen and been
//     evicted), and from then on the job is gone for good; but where the
//     run's retention evicts nothing (CheckConfig.Retained, as the crash
//     test runs), a 404 for a submitted job is a lost job, illegal.
//   - An operation whose reply was lost changes nothing the clients can
//     rely on: the unseen steps already allow any effect it could have had.
//
// cfg says what the server was given: with Retained, retention evicts
// nothing and a 404 for a submitted job is illegal (NoLostJob); KnowsTTL
// says whether its terminal snapshots carry expires_at.
func HTTPJobModel(cfg CheckConfig) porcupine.Model {
	return httpJobModel(rules{retained: cfg.Retained, knowsTTL: cfg.KnowsTTL})
}

// httpJobModel is HTTPJobModel with the clauses r in force.
func httpJobModel(r rules) porcupine.Model {
	return porcupine.Model{
		Partition: partitionByJob,
		Init:      func() any { return httpJobState{} },
		Step: func(state, input, output any) (bool, any) {
			return stepHTTPJob(r, state.(httpJobState), input.(Input), output.(Output))
		},
		Equal: func(a, b any) bool { return a.(httpJobState) == b.(httpJobState) },
		Hash:  func(state any) uint64 { return hashHTTPJob(state.(httpJobState)) },
		DescribeOperation: func(input, output any) string {
			return Describe(input.(Input), output.(Output))
		},
		DescribeState: func(state any) string { return describeHTTPJob(state.(httpJobState)) },
	}
}

func stepHTTPJob(r rules, s httpJobState, in Input, out Output) (bool, httpJobState) {
	if in.Kind.creates() {
		// Only an admission names a job (jobKey): a 202, a submit-wait's
		// 200 or 202, whose wait is its SubmitWaitRead (submitwait.go), or
		// the KeyedAdmit of a job keyed 202s name (httpkeys.go).
		if !r.holds(httpSubmitOnce, !s.Submitted) || !r.holds(httpOutcomeKnown, admitted(in, out)) {
			return false, s
		}
		return true, httpJobState{Submitted: true, State: StatePending, TaskID: in.TaskID, Req: in.Value}
	}
	if out.Outcome == Unknown {
		return true, s
	}
	if in.Kind == SubmitKeyed {
		// A keyed 202 (jobKey puts no other in a partition) answers from
		// the retained job that holds its key, or from the one it created,
		// after the KeyedAdmit: it says the job exists and is retained, and
		// nothing of its state (a replay's body says PENDING whatever the
		// state). Its body and key are KeyModel's to judge.
		return r.holds(httpNoJobBeforeSubmit, s.Submitted) && r.holds(httpGoneForGood, !s.Gone), s
	}
	if in.Kind == SubmitWaitRead && out.Outcome == Deadline && s.Submitted {
		return waitRanOut(r, s)
	}
	if out.Outcome == NotFound {
		if s.Submitted {
			if !r.holds(httpNoLostJob, !r.retained) {
				return false, s
			}
			s.Gone = true
		}
		return true, s
	}
	if !r.holds(httpNoJobBeforeSubmit, s.Submitted) || !r.holds(httpGoneForGood, !s.Gone) {
		return false, s
	}
	switch in.Kind {
	case Snapshot:
		if out.Outcome == OK {
			return observeView(r, s, out)
		}
	case Wait:
		switch out.Outcome {
		case OK:
			if !r.holds(httpWaitTerminal, out.State.Terminal()) {
				return false, s
			}
			return observeView(r, s, out)
		case Deadline:
			if !r.holds(httpWaitDeadlineOnlyLive, !out.State.Terminal()) {
				return false, s
			}
			return observeView(r, s, out)
		}
	case Result:
		switch out.Outcome {
		case OK:
			return observeResult(r, s, out)
		case NotDone:
			if !r.holds(httpNotDoneOnlyIfNotDone, out.State != StateDone) {
				return false, s
			}
			return observeState(r, s, out.State)
		}
	case SubmitWaitRead:
		if out.Outcome == OK {
			if !r.holds(httpSubmitWaitTerminal, out.State.Terminal()) {
				return false, s
			}
			if out.Value != "" { // the body of GET result
				return observeResult(r, s, out)
			}
			return observeView(r, s, out)
		}
	case Cancel:
		switch out.Outcome {
		case OK:
			// The cancel's Fail found the job not terminal: from PENDING it
			// may have started unseen first, from RUNNING it had.
			if !r.holds(httpCancelOnlyLive, !s.State.Terminal()) ||
				!r.holds(httpCancelShowsCanceled, out.State == StateFailed && out.Err == CancelError && out.Completed) ||
				!r.holds(httpReadTaskID, out.TaskID == s.TaskID) ||
				!r.holds(httpStartedStays, !s.Started || out.Started) ||
				!expiresHolds(r, out) {
				return false, s
			}
			s.State, s.Err, s.Started, s.Final = StateFailed, out.Err, out.Started, true
			return true, s
		case Terminal:
			if !r.holds(httpCancelRefusedOnlyIfTerminal, out.State.Terminal()) {
				return false, s
			}
			return observeState(r, s, out.State)
		}
	}
	return r.holds(httpOutcomeKnown, false), s
}

// observeView applies a full snapshot view: legal when it is reachable from
// s, and then it is the job's state.
func observeView(r rules, s httpJobState, out Output) (bool, httpJobState) {
	st := out.State
	if !r.holds(httpReadTaskID, out.TaskID == s.TaskID) ||
		!r.holds(httpCompletedIffTerminal, out.Completed == st.Terminal()) ||
		!r.holds(httpErrOnlyOnFailure, out.Err == "" || st == StateFailed || st == StateTimedOut) ||
		!r.holds(httpStartedMatchesState, !(st == StatePending && out.Started || st == StateRunning && !out.Started)) ||
		!r.holds(httpStartedStays, !s.Started || out.Started) ||
		!expiresHolds(r, out) {
		return false, s
	}
	if s.State.Terminal() {
		if !r.holds(httpTerminalAbsorbing, st == s.State) ||
			!r.holds(httpFinalViewFixed, !s.Final || out.Err == s.Err && out.Started == s.Started) {
			return false, s
		}
	} else if !r.holds(httpStateMachine, st != StatePending || s.State == StatePending) {
		return false, s
	}
	s.State, s.Started, s.Err, s.Final = st, out.Started, out.Err, st.Terminal()
	return true, s
}

// expiresHolds reports whether a view's expires_at is where it belongs: on
// a terminal view exactly when the server knows its TTL, never on a live
// one.
func expiresHolds(r rules, out Output) bool {
	if !out.State.Terminal() {
		return r.holds(httpExpiresOnlyTerminal, !out.Expires)
	}
	return r.holds(httpExpiresWithTTL, out.Expires == r.knowsTTL)
}

// observeResult applies the 200 of GET result, or a submit-wait's 200 with
// that body: DONE with exactly the submitted params (echo returns them).
func observeResult(r rules, s httpJobState, out Output) (bool, httpJobState) {
	if !r.holds(httpResultOnlyWhenDone, out.State == StateDone) ||
		!r.holds(httpEchoResult, out.Value == s.Req) ||
		!r.holds(httpReadTaskID, out.TaskID == s.TaskID) {
		return false, s
	}
	return observeState(r, s, out.State)
}

// waitRanOut applies a submit-wait's 202 after its wait: the job was not
// terminal when the wait ran out, or it had been evicted before the wait
// began (the server answers 202 then too), which is legal only where
// retention evicts, and leaves the job gone for good. A job not seen
// terminal may have been either; the live branch allows every later
// observation the gone branch does, so it is the one taken. Without the
// clause, a 202 for a job seen terminal is taken as live; with it, such a
// 202 makes the job gone, so a violation is reported by the clause that
// a later view of the job breaks (GoneForGood) or, where retention evicts
// nothing, by NoLostJob, never by SubmitWaitDeadlineOnlyLive itself.
func waitRanOut(r rules, s httpJobState) (bool, httpJobState) {
	if s.Gone || !s.State.Terminal() || r.holds(httpSubmitWaitDeadlineOnlyLive, false) {
		return true, s
	}
	if !r.holds(httpNoLostJob, !r.retained) {
		return false, s
	}
	s.Gone = true
	return true, s
}

// observeState applies a view that shows only the state (a result, a 409).
func observeState(r rules, s httpJobState, st State) (bool, httpJobState) {
	if s.State.Terminal() {
		return r.holds(httpTerminalAbsorbing, st == s.State), s
	}
	if !r.holds(httpStateMachine, st != StatePending || s.State == StatePending) {
		return false, s
	}
	s.State = st
	if st == StateRunning {
		s.Started = true
	}
	return true, s
}

func hashHTTPJob(s httpJobState) uint64 {
	h := fnv.New64a()
	var flags byte
	for i, b := range []bool{s.Submitted, s.Gone, s.Started, s.Final} {
		if b {
			flags |= 1 << i
		}
	}
	h.Write([]byte{flags, byte(s.State)})
	for _, f := range []string{s.TaskID, s.Req, s.Err} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func describeHTTPJob(s httpJobState) string {
	if !s.Submitted {
		return "unsubmitted"
	}
	var b strings.Builder
	b.WriteString(s.State.String())
	if s.Started {
		b.WriteString(" started")
	}
	if s.Gone {
		b.WriteString(" evicted")
	}
	if s.Err != "" {
		fmt.Fprintf(&b, " err=%q", s.Err)
	}
	if s.State.Terminal() && !s.Final {
		b.WriteString(" (error and start not yet seen)")
	}
	return b.String()
}
