package linearizability

// Each model's Step is a list of named clauses: a clause is one rule, a
// condition under which an operation is illegal. docs/verification.md lists
// them under the same names, with the invariant or property of
// spec/JobTable.tla each mirrors where there is one.
//
// Every clause is needed: with any one removed, some must-fail history in
// testdata is accepted, which the package's tests check. A clause that no
// history needs is vacuous, and one that nothing pins can be deleted, or
// broken, with every gate still passing. Production code builds every
// model with all its clauses in force; only the tests build one with a
// clause removed.

// clause names one rule of a model.
type clause struct {
	Name string // as docs/verification.md names it
	Spec string // what it mirrors in spec/JobTable.tla; empty if nothing
	Rule string // the rule, in one line
}

// clauseID indexes one model's clause list.
type clauseID uint8

// rules is the set of a model's clauses in force. The zero value is every
// clause; off holds a bit per clause removed. retained says that the
// history was recorded with retention that evicts nothing (see
// CheckConfig.Retained), which puts the clauses that assume it in force;
// knowsTTL, that the server knew its retention TTL (CheckConfig.KnowsTTL),
// which decides whether a terminal view carries expires_at.
type rules struct {
	off      uint64
	retained bool
	knowsTTL bool
}

// holds reports whether clause c allows an operation: legal says whether
// the operation keeps the rule, and a removed clause allows everything.
func (r rules) holds(c clauseID, legal bool) bool { return legal || r.off&(1<<c) != 0 }

// without returns the rules in force with clause c removed.
func (r rules) without(c clauseID) rules {
	r.off |= 1 << c
	return r
}

// The clauses of JobModel, in the order its Step tests them.
const (
	jobSubmitOnce clauseID = iota
	jobNoJobBeforeSubmit
	jobNoEvictNonTerminal
	jobGoneForGood
	jobRequestOnce
	jobTerminalReleasesRequest
	jobTakeReturnsRequest
	jobRequestTakenOnlyAfterTake
	jobRequestTakenOnlyLive
	jobTakeRefusedOnlyIfTerminal
	jobRunningFromPending
	jobNotPendingOnlyIfNotPending
	jobTerminalAbsorbing
	jobEndRefusedOnlyIfTerminal
	jobReadState
	jobReadTaskID
	jobReadErr
	jobReadStarted
	jobReadCompleted
	jobResultOnlyWhenDone
	jobResultIsWinners
	jobNotDoneOnlyIfNotDone
	jobWaitTerminal
	jobWaitDeadlineOnlyLive
	jobReplayMatchesCreation
	jobOutcomeKnown
)

var jobClauses = [...]clause{
	jobSubmitOnce:                 {"SubmitOnce", "", "Submit creates a job once per id"},
	jobNoJobBeforeSubmit:          {"NoJobBeforeSubmit", "", "a call finds a job only after its Submit"},
	jobNoEvictNonTerminal:         {"NoEvictNonTerminal", "NoEvictNonTerminalInv", "a call finds no job only once it is terminal (evicted)"},
	jobGoneForGood:                {"GoneForGood", "", "a job not found stays gone: ids are never reused"},
	jobRequestOnce:                {"RequestOnce", "RequestOnceInv", "TakeRequest returns the request only while it is not taken"},
	jobTerminalReleasesRequest:    {"TerminalReleasesRequest", "TerminalReleasesRequestInv", "TakeRequest returns the request only while the job is not terminal"},
	jobTakeReturnsRequest:         {"TakeReturnsRequest", "", "TakeRequest returns the submitted request"},
	jobRequestTakenOnlyAfterTake:  {"RequestTakenOnlyAfterTake", "RequestOnceInv", "ErrRequestTaken only once the request was taken"},
	jobRequestTakenOnlyLive:       {"RequestTakenOnlyLive", "TerminalReleasesRequestInv", "ErrRequestTaken only on a job not terminal; a terminal one answers ErrTerminal, taken or not"},
	jobTakeRefusedOnlyIfTerminal:  {"TakeRefusedOnlyIfTerminal", "", "TakeRequest answers ErrTerminal only on a terminal job"},
	jobRunningFromPending:         {"RunningFromPending", "RunningFromPendingInv", "Start succeeds only from PENDING"},
	jobNotPendingOnlyIfNotPending: {"NotPendingOnlyIfNotPending", "", "Start answers ErrNotPending only on a job not PENDING"},
	jobTerminalAbsorbing:          {"TerminalAbsorbing", "TerminalAbsorbingInv", "Finish, Fail and Timeout win only from a non-terminal state: one winner, terminal states absorbing"},
	jobEndRefusedOnlyIfTerminal:   {"EndRefusedOnlyIfTerminal", "", "Finish, Fail and Timeout answer ErrTerminal only on a terminal job"},
	jobReadState:                  {"ReadState", "ConsistentReadInv", "a snapshot, wait or result shows the current state"},
	jobReadTaskID:                 {"ReadTaskID", "ConsistentReadInv", "a snapshot, wait or result shows the job's task id"},
	jobReadErr:                    {"ReadErr", "ConsistentReadInv", "a snapshot, wait or result shows the winning Fail's or Timeout's message"},
	jobReadStarted:                {"ReadStarted", "PayloadConsistencyInv", "a snapshot, wait or result shows started_at exactly when Start won"},
	jobReadCompleted:              {"ReadCompleted", "PayloadConsistencyInv", "a snapshot, wait or result shows completed_at exactly when terminal"},
	jobResultOnlyWhenDone:         {"ResultOnlyWhenDone", "ConsistentReadInv", "Result returns a result only when DONE"},
	jobResultIsWinners:            {"ResultIsWinners", "PayloadConsistencyInv", "Result returns the winning Finish's result, until eviction"},
	jobNotDoneOnlyIfNotDone:       {"NotDoneOnlyIfNotDone", "", "Result answers ErrNotDone only on a job not DONE"},
	jobWaitTerminal:               {"WaitTerminal", "WaitTerminalInv", "Wait returns nil only with a terminal state"},
	jobWaitDeadlineOnlyLive:       {"WaitDeadlineOnlyLive", "NoLostWakeupInv", "Wait returns its deadline only with a non-terminal state"},
	jobReplayMatchesCreation:      {"ReplayMatchesCreation", "", "a keyed replay names a job created with the replay's task id and request"},
	jobOutcomeKnown:               {"OutcomeKnown", "", "a call answers only with an outcome it can return"},
}

// The clauses of AdmissionModel.
const (
	admAdmitBelowBound clauseID = iota
	admRejectOnlyAtBound
	admDecrementAboveZero
	admOutcomeKnown
)

var admissionClauses = [...]clause{
	admAdmitBelowBound:    {"AdmitBelowBound", "DepthBoundInv", "an accepted Submit needs depth < max_queue, and adds one"},
	admRejectOnlyAtBound:  {"RejectOnlyAtBound", "", "a rejected Submit (ErrQueueFull) needs depth = max_queue"},
	admDecrementAboveZero: {"DecrementAboveZero", "DepthBoundInv", "a winning terminal call needs depth > 0, and removes one"},
	admOutcomeKnown:       {"OutcomeKnown", "", "a Submit answers only OK or ErrQueueFull"},
}

// The clauses of HTTPJobModel.
const (
	httpSubmitOnce clauseID = iota
	httpNoJobBeforeSubmit
	httpGoneForGood
	httpNoLostJob
	httpReadTaskID
	httpCompletedIffTerminal
	httpErrOnlyOnFailure
	httpStartedMatchesState
	httpStartedStays
	httpTerminalAbsorbing
	httpFinalViewFixed
	httpStateMachine
	httpWaitTerminal
	httpWaitDeadlineOnlyLive
	httpSubmitWaitTerminal
	httpSubmitWaitDeadlineOnlyLive
	httpExpiresOnlyTerminal
	httpExpiresWithTTL
	httpResultOnlyWhenDone
	httpEchoResult
	httpNotDoneOnlyIfNotDone
	httpCancelOnlyLive
	httpCancelShowsCanceled
	httpCancelRefusedOnlyIfTerminal
	httpOutcomeKnown
)

var httpJobClauses = [...]clause{
	httpSubmitOnce:                  {"SubmitOnce", "", "a 202 creates a job once per id"},
	httpNoJobBeforeSubmit:           {"NoJobBeforeSubmit", "", "a reply shows a job only after its 202"},
	httpGoneForGood:                 {"GoneForGood", "", "a 404 is for good: ids are never reused"},
	httpNoLostJob:                   {"NoLostJob", "AckedDurableInv", "where retention evicts nothing (a crash test), a submitted job never answers 404: restarts lose no acknowledged job"},
	httpReadTaskID:                  {"ReadTaskID", "ConsistentReadInv", "a view, a result or a cancel's 200 shows the job's task id"},
	httpCompletedIffTerminal:        {"CompletedIffTerminal", "PayloadConsistencyInv", "a view has completed_at exactly when terminal"},
	httpErrOnlyOnFailure:            {"ErrOnlyOnFailure", "PayloadConsistencyInv", "a view has an error only when FAILED or TIMEOUT"},
	httpStartedMatchesState:         {"StartedMatchesState", "PayloadConsistencyInv", "a PENDING view has no started_at, a RUNNING one has it"},
	httpStartedStays:                {"StartedStays", "TimestampOrderInv", "started_at never goes away once seen"},
	httpTerminalAbsorbing:           {"TerminalAbsorbing", "TerminalAbsorbingInv", "once seen terminal, the job shows that terminal state for good"},
	httpFinalViewFixed:              {"FinalViewFixed", "TerminalAbsorbingInv", "once a terminal view is seen, its error and started mark never change"},
	httpStateMachine:                {"StateMachine", "StateMachineProp", "once seen past PENDING, the job never shows PENDING again"},
	httpWaitTerminal:                {"WaitTerminal", "WaitTerminalInv", "a wait returns a terminal view, except on its own timeout"},
	httpWaitDeadlineOnlyLive:        {"WaitDeadlineOnlyLive", "NoLostWakeupInv", "a wait's timeout comes only with a non-terminal view"},
	httpSubmitWaitTerminal:          {"SubmitWaitTerminal", "WaitTerminalInv", "a submit-wait's 200 carries a terminal state"},
	httpSubmitWaitDeadlineOnlyLive:  {"SubmitWaitDeadlineOnlyLive", "NoLostWakeupInv", "a submit-wait's 202 after its wait comes only with the job not terminal when the wait ran out, or evicted before it began"},
	httpExpiresOnlyTerminal:         {"ExpiresOnlyTerminal", "PayloadConsistencyInv", "a PENDING or RUNNING view never carries expires_at"},
	httpExpiresWithTTL:              {"ExpiresWithTTL", "NoEarlyEvictionInv", "a terminal view carries expires_at exactly when the server knows its TTL"},
	httpResultOnlyWhenDone:          {"ResultOnlyWhenDone", "ConsistentReadInv", "GET result answers 200 only with DONE"},
	httpEchoResult:                  {"EchoResult", "PayloadConsistencyInv", "GET result's 200 carries exactly the submitted params (echo)"},
	httpNotDoneOnlyIfNotDone:        {"NotDoneOnlyIfNotDone", "", "GET result's 409 carries a state other than DONE"},
	httpCancelOnlyLive:              {"CancelOnlyLive", "TerminalAbsorbingInv", "a cancel's 200 (a Fail that won) never comes after the job was seen terminal"},
	httpCancelShowsCanceled:         {"CancelShowsCanceled", "", "a cancel's 200 shows FAILED \"canceled\", completed"},
	httpCancelRefusedOnlyIfTerminal: {"CancelRefusedOnlyIfTerminal", "", "a cancel's 409 carries a terminal state"},
	httpOutcomeKnown:                {"OutcomeKnown", "", "a request answers only with an outcome it can return"},
}

// The clauses of HTTPAdmissionModel.
const (
	hadmAdmitBelowBound clauseID = iota
	hadmRejectOnlyAtBound
	hadmReadSeesLive
	hadmEndOnlyLive
	hadmOutcomeKnown
)

var httpAdmissionClauses = [...]clause{
	hadmAdmitBelowBound:   {"AdmitBelowBound", "DepthBoundInv", "a 202 needs fewer than max_queue live jobs, and makes its job live"},
	hadmRejectOnlyAtBound: {"RejectOnlyAtBound", "", "a 429 needs max_queue live jobs"},
	hadmReadSeesLive:      {"ReadSeesLive", "DepthInv", "a read that saw its job PENDING or RUNNING needs the job live"},
	hadmEndOnlyLive:       {"EndOnlyLive", "DecrementOnceInv", "a job's end needs the job live (admitted, not yet ended), and removes it"},
	hadmOutcomeKnown:      {"OutcomeKnown", "", "a POST answers only 202 or 429"},
}

// The clauses of KeyModel and HTTPKeyModel. ReplayNamesHolder is last:
// HTTPKeyModel has every clause but it, since over HTTP a replay is the
// 202 that names the holder (httpkeys.go).
const (
	keyNewJobOnlyWhenFree clauseID = iota
	keyReplaySameBody
	keyConflictOnlyOnOtherBody
	keyFullOnlyWhenFree
	keyReplayNamesHolder
)

var keyClauses = [...]clause{
	keyNewJobOnlyWhenFree:      {"NewJobOnlyWhenFree", "", "a submit under a key creates a job only when no retained job holds the key (where retention evicts nothing, only once)"},
	keyReplaySameBody:          {"ReplaySameBody", "", "a replay carries the body the key's job was created with"},
	keyConflictOnlyOnOtherBody: {"ConflictOnlyOnOtherBody", "", "a 422 (ErrKeyConflict) only while a job holds the key with another body"},
	keyFullOnlyWhenFree:        {"FullOnlyWhenFree", "", "a keyed 429 (ErrQueueFull) only when no retained job holds the key"},
	keyReplayNamesHolder:       {"ReplayNamesHolder", "", "a replay returns the job that holds the key"},
}
