package linearizability

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Pending is the Return time of an operation that never returned: porcupine
// reads [Call, Pending] as "took effect at any time after Call, or never".
const Pending = math.MaxInt64

// Kind names a ledger operation.
type Kind uint8

// The operations a history holds. SetDepth is not a ledger call: Check puts
// it at the head of each admission segment to state the depth the segment
// starts from. Cancel is POST /jobs/{id}/cancel, recorded only at the HTTP
// level. End is not a call either: CheckHTTP derives one per admitted job,
// the terminal transition that the server makes unseen (see
// HTTPAdmissionModel). SubmitWait is POST /jobs with Prefer: wait=N, at the
// HTTP level only; SubmitWaitRead is not a call: CheckHTTP derives one per
// admitted SubmitWait, what the server's wait saw (see submitwait.go).
// SubmitKeyed is POST /jobs with an Idempotency-Key at the HTTP level, and
// the table's SubmitKeyed at the table level; KeyedAdmit is not a call: CheckHTTP derives one per job that keyed
// 202s name, its creation (see httpkeys.go).
const (
	Submit Kind = iota + 1
	TakeRequest
	Start
	Finish
	Fail
	Timeout
	Snapshot
	Wait
	Result
	SetDepth
	Cancel
	End
	SubmitWait
	SubmitWaitRead
	SubmitKeyed
	KeyedAdmit
)

var kindNames = [...]string{
	Submit:         "submit",
	TakeRequest:    "take",
	Start:          "start",
	Finish:         "finish",
	Fail:           "fail",
	Timeout:        "timeout",
	Snapshot:       "snapshot",
	Wait:           "wait",
	Result:         "result",
	SetDepth:       "set-depth",
	Cancel:         "cancel",
	End:            "end",
	SubmitWait:     "submit-wait",
	SubmitWaitRead: "submit-wait-read",
	SubmitKeyed:    "submit-keyed",
	KeyedAdmit:     "keyed-admit",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// posts reports whether k is a POST /jobs or a Submit: Submit,
// SubmitWait or SubmitKeyed.
func (k Kind) posts() bool { return k == Submit || k == SubmitWait || k == SubmitKeyed }

// creates reports whether an operation of kind k creates the job it names
// when admitted: Submit, SubmitWait, or the KeyedAdmit derived for the
// keyed 202s of a job (a keyed 202 itself may be a replay).
func (k Kind) creates() bool { return k == Submit || k == SubmitWait || k == KeyedAdmit }

// Terminal reports whether k is a terminal call: Finish, Fail or Timeout.
func (k Kind) Terminal() bool { return k == Finish || k == Fail || k == Timeout }

// terminalState is the state a winning terminal call of kind k ends in.
func (k Kind) terminalState() State {
	switch k {
	case Finish:
		return StateDone
	case Fail:
		return StateFailed
	default:
		return StateTimedOut
	}
}

// Outcome classifies how an operation returned: success, one of the
// ledger's sentinel errors, the caller's deadline, or Unknown for an
// operation whose effect nobody saw (it never returned, or its transport
// failed).
type Outcome uint8

// Outcomes. OK is a nil error.
const (
	Unknown Outcome = iota
	OK
	QueueFull
	NotFound
	NotPending
	Terminal
	NotDone
	RequestTaken
	Deadline
	KeyConflict // ErrKeyConflict, of SubmitKeyed (KeyModel)
	TenantFull  // ErrTenantQueueFull, of a Submit (TenantAdmissionModel)
)

var outcomeNames = [...]string{
	Unknown:      "unknown",
	OK:           "ok",
	QueueFull:    "queue-full",
	NotFound:     "not-found",
	NotPending:   "not-pending",
	Terminal:     "terminal",
	NotDone:      "not-done",
	RequestTaken: "request-taken",
	Deadline:     "deadline",
	KeyConflict:  "key-conflict",
	TenantFull:   "tenant-full",
}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// Input is what a client asked for. It is a comparable value.
type Input struct {
	Kind Kind
	// ID is the job the operation names; empty for Submit and SetDepth.
	ID string
	// TaskID is the task id given to Submit.
	TaskID string
	// Value is the request given to Submit, the result given to Finish, or
	// the error message given to Fail and Timeout.
	Value string
	// Depth is the starting depth of a SetDepth.
	Depth int
	// Key is the Idempotency-Key of a SubmitKeyed, and the key of a
	// KeyedAdmit; Digest is a digest of the SubmitKeyed's body (equal
	// digests, equal bodies), the same for its KeyedAdmit.
	Key, Digest string
	// Tenant is the tenant of a Submit's job, or the tenant a call that
	// names a job is scoped to when Scoped is set (ledger.WithTenant).
	Tenant string
	Scoped bool
	// TenantMax is a Submit's bound on its tenant's live jobs, 0 for none.
	TenantMax int
}

// Output is what the client saw. It is a comparable value. The view
// fields (State to Expires) are set by Snapshot, Wait and Result, and by
// every outcome of theirs that carries a snapshot (NotDone, Deadline).
//
// A SubmitWait answers OK for a 200 (the job ended within the wait: Value
// holds the result when the body was GET result's, DONE; otherwise the
// view fields hold the terminal snapshot), Deadline for a 202 (the job had
// not ended when the wait ran out), QueueFull for a 429. ID is the job's
// id for OK and Deadline; Waited is the wait the server applied
// (Preference-Applied, in the history's time unit), zero when it applied
// none.
type Output struct {
	Outcome Outcome
	// ID is the id Submit returned.
	ID string
	// Value is the request TakeRequest returned or the result Result
	// returned.
	Value string

	State     State
	TaskID    string
	Err       string // the snapshot's error message; empty when nil
	Started   bool   // the snapshot's StartedAt is set
	Completed bool   // the snapshot's CompletedAt is set
	Expires   bool   // the snapshot's expires_at is set (HTTP level)

	Waited int64 // SubmitWait: the wait the server applied
	// Replayed is set on a SubmitKeyed recorded at the table level whose
	// table said it replayed the job that holds its key (ID) rather than
	// created one. Over HTTP a replay looks like a creation: it is never
	// set there.
	Replayed bool
}

// HasView reports whether an operation of kind k that returned o carries a
// snapshot: whether its Output's view fields are set.
func HasView(k Kind, o Outcome) bool {
	switch k {
	case Snapshot:
		return o == OK
	case Wait:
		return o == OK || o == Deadline
	case Result:
		return o == OK || o == NotDone
	case Cancel:
		return o == OK || o == Terminal
	case SubmitWait, SubmitWaitRead:
		return o == OK
	}
	return false
}

// Describe renders an operation for the visualization and for messages.
func Describe(in Input, out Output) string {
	var b strings.Builder
	b.WriteString(in.Kind.String())
	switch in.Kind {
	case SetDepth:
		fmt.Fprintf(&b, "(%d)", in.Depth)
		return b.String()
	case End:
		fmt.Fprintf(&b, "(%s)", short(in.ID))
		return b.String()
	case Submit, SubmitWait:
		fmt.Fprintf(&b, "(%s, %q)", in.TaskID, in.Value)
		if in.Tenant != "" || in.TenantMax > 0 {
			fmt.Fprintf(&b, " of %q (at most %d)", in.Tenant, in.TenantMax)
		}
	case SubmitKeyed, KeyedAdmit:
		fmt.Fprintf(&b, "(%q, %s, %s, %q)", in.Key, short(in.Digest), in.TaskID, in.Value)
	case Finish, Fail, Timeout:
		fmt.Fprintf(&b, "(%s, %q)", short(in.ID), in.Value)
	default:
		fmt.Fprintf(&b, "(%s)", short(in.ID))
	}
	if in.Scoped {
		fmt.Fprintf(&b, " as %q", in.Tenant)
	}
	b.WriteString(" -> ")
	b.WriteString(out.Outcome.String())
	switch {
	case (in.Kind == Submit || in.Kind == SubmitKeyed || in.Kind == KeyedAdmit) && out.Outcome == OK:
		fmt.Fprintf(&b, " %s", short(out.ID))
		if out.Replayed {
			b.WriteString(" replayed")
		}
	case in.Kind == SubmitWait && (out.Outcome == OK || out.Outcome == Deadline):
		fmt.Fprintf(&b, " %s after waiting %v", short(out.ID), time.Duration(out.Waited))
	case in.Kind == TakeRequest && out.Outcome == OK:
		fmt.Fprintf(&b, " %q", out.Value)
	}
	if HasView(in.Kind, out.Outcome) {
		fmt.Fprintf(&b, " %s", out.State)
		if out.Value != "" && (in.Kind == Result || in.Kind == SubmitWait || in.Kind == SubmitWaitRead) {
			fmt.Fprintf(&b, " %q", out.Value)
		}
		if out.Err != "" {
			fmt.Fprintf(&b, " err=%q", out.Err)
		}
		if out.Started {
			b.WriteString(" started")
		}
		if out.Completed {
			b.WriteString(" completed")
		}
		if out.Expires {
			b.WriteString(" expires")
		}
	}
	return b.String()
}

// short abbreviates a long job id for display.
func short(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

// sortByCall orders ops by call time, keeping the order of equal calls.
func sortByCall(ops []porcupine.Operation) {
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
}
