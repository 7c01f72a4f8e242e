------------------------------ MODULE JobLedger ------------------------------
(***************************************************************************)
(* The ledger's contract (package ledger, interface Ledger), with every    *)
(* operation one atomic step: what every store must look like to its       *)
(* callers, whatever its locks, transactions or replicas.  JobTable.tla    *)
(* (the memory store), DurableLedger.tla (the SQLite store) and            *)
(* SharedLedger.tla (replicas on one database) refine it:                *)
(* MCJobTableRefinement.tla, MCDurableLedgerRefinement.tla and             *)
(* MCSharedLedgerRefinement.tla map their variables onto these and TLC     *)
(* checks that each of their steps is a step of Next below or leaves these *)
(* variables unchanged.                                                    *)
(*                                                                         *)
(* It is the sequential behaviour the porcupine models of package          *)
(* linearizability encode, as a state machine: the actions carry the       *)
(* names of those models' operations (Submit, TakeRequest, Start, Finish,  *)
(* Fail, Timeout, Snapshot, Result, Wait; SubmitKeyed is KeyModel's        *)
(* submit), and the guards are their clauses: Start only from PENDING      *)
(* (RunningFromPending), an end only from PENDING or RUNNING, one winner   *)
(* (TerminalAbsorbing), the request handed out once and only while the     *)
(* job is live (RequestOnce, TerminalReleasesRequest), an admission only   *)
(* below the bound (AdmitBelowBound) and a decrement per end               *)
(* (DecrementAboveZero), retention evicting terminal jobs only             *)
(* (NoEvictNonTerminal), a wait returning nil only with a terminal state   *)
(* (WaitTerminal) and its deadline only with a live one                    *)
(* (WaitDeadlineOnlyLive).  A refused call (ErrQueueFull, ErrNotPending,   *)
(* ErrTerminal, ErrRequestTaken, ErrNotFound, a replayed or conflicting    *)
(* key) changes nothing, so it is no step here: the porcupine models judge *)
(* whether a refusal was due.  One refusal is a step of its own, since a   *)
(* store's model makes it: a second TakeRequest of a live job, refused     *)
(* with ErrRequestTaken (TakeTaken), which records it in a history         *)
(* variable and is due only once the request was handed out (where         *)
(* TakeRefusals is TRUE: it doubles the states of what it is no part of).  *)
(*                                                                         *)
(* Retention runs inside Submit and SubmitKeyed, before the insertion, as  *)
(* in every store: TTL first, then the oldest terminal jobs beyond         *)
(* MaxCompleted.  Wait is three steps, because waiting is: the call        *)
(* registers (or returns at once on a terminal job), the end of the job    *)
(* wakes every registered waiter in the step that makes it terminal, and   *)
(* the call returns.  A waiter's context may end (WaitCancel), a woken     *)
(* waiter may find its job evicted (WaitGone), and callers may vanish      *)
(* mid-call (WaitVanish: a replica that crashed).                          *)
(*                                                                         *)
(* Tenants: a job belongs to the tenant whose share of Jobs holds it       *)
(* (Shares, a partition of some of the jobs; a job in none is of a tenant   *)
(* that has no bound).  An admission is below both bounds, the tenant's     *)
(* (TenantMax, 0 for none) and the ledger's, checked and counted in its    *)
(* one step (TenantBoundInv).  Where SplitAdmission is TRUE a submit may   *)
(* also look at the bounds in a step of its own before the one that admits *)
(* (SubmitCheck: a read ahead of the write, as a store may do); the        *)
(* admission checks both again, so the early look decides nothing.  The    *)
(* mutations that drop either check from Admit are the seed's D3 one       *)
(* level up: a bound checked apart from its count.                        *)
(*                                                                         *)
(* Self-contained, for tla-checker, which reads no EXTENDS of user         *)
(* modules.                                                                *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,          \* job ids (model values)
    Keys,          \* idempotency keys SubmitKeyed may be given
    Waiters,       \* callers of Wait, one call each
    Readers,       \* callers of Snapshot and Result
    MaxQueue,      \* Config.MaxQueue: live (PENDING or RUNNING) jobs at most
    MaxCompleted,  \* Config.MaxCompleted: terminal jobs kept beyond TTL
    TTL,           \* Config.JobTTL, in clock ticks
    MaxTime,       \* bound of the clock
    Outcomes,      \* the terminal states ends may produce
    WaitDeadline,  \* TRUE: a waiter's context may end while it waits
    TakeRefusals,  \* TRUE: a refused second TakeRequest is a step
    Shares,        \* the tenants, each as the set of its jobs (disjoint)
    TenantMax,     \* each tenant's bound on its live jobs; 0 for none
    SplitAdmission \* TRUE: a submit may check the bounds in a step of its own

ASSUME
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat \ {0}
    /\ TTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ Outcomes \subseteq {"DONE", "FAILED", "TIMEOUT"}
    /\ WaitDeadline \in BOOLEAN
    /\ TakeRefusals \in BOOLEAN
    /\ Shares \subseteq SUBSET Jobs
    /\ \A s1, s2 \in Shares : s1 # s2 => s1 \cap s2 = {}
    /\ TenantMax \in Nat
    /\ SplitAdmission \in BOOLEAN

Absent   == "ABSENT"   \* never submitted
NoJob    == "nojob"    \* a waiter that has not named its job yet
NoKey    == "nokey"    \* a job submitted without a key
NoTime   == -1         \* no completion time
Live     == {"PENDING", "RUNNING"}
Terminal == {"DONE", "FAILED", "TIMEOUT"}
States   == Live \cup Terminal

\* What Snapshot and Result returned: nothing yet, a snapshot with its
\* state, or Result's DONE with the result.
NoView   == [kind |-> "none", st |-> Absent]
Views    == [kind : {"none", "snapshot", "result"}, st : States \cup {Absent}]

VARIABLES
    st,           \* st[j]: Absent or the job's state (kept after eviction)
    table,        \* the retained jobs: submitted, not evicted
    taken,        \* taken[j]: TakeRequest handed the request out
    started,      \* started[j]: Start won (started_at is set)
    keyOf,        \* keyOf[j]: the key j was submitted under, or NoKey
    depth,        \* live jobs (the depth the bound applies to)
    lru,          \* terminal retained jobs, in completion order
    completedAt,  \* completedAt[j]: when j ended, or NoTime
    now,          \* the clock the store's deadlines and retention read
    outcome,      \* history: the first terminal state of each job
    wpc,          \* wpc[w]: "Idle", "Blocked", "Woken", "Expired", "Done"
    wjob,         \* wjob[w]: the job w waits on, once it named it
    wout,         \* wout[w]: what Wait returned: "none", "ok", "deadline"
    rview,        \* rview[r]: the last view Snapshot or Result returned
    refusedTake,  \* refusedTake[j]: a TakeRequest of j was refused with
                  \*   ErrRequestTaken (history)
    checked       \* the jobs whose submit looked at the bounds (SubmitCheck)
                  \*   and has not been admitted yet

vars == <<st, table, taken, started, keyOf, depth, lru, completedAt, now,
          outcome, wpc, wjob, wout, rview, refusedTake, checked>>

Range(s) == {s[i] : i \in DOMAIN s}

\* The share of j's tenant: its jobs, {} for a job of no bounded tenant.
Owner(j) == IF \E s \in Shares : j \in s THEN CHOOSE s \in Shares : j \in s ELSE {}

\* The live jobs of the tenant whose share is s.
TenantLive(s) == Cardinality({i \in s : st[i] \in Live})

\* j's tenant is below its bound.
TenantRoom(j) == TenantMax = 0 \/ Owner(j) = {} \/ TenantLive(Owner(j)) < TenantMax

-----------------------------------------------------------------------------
(* Retention, as Submit runs it: TTL first, then the LRU bound.            *)

Expired(j) == completedAt[j] + TTL <= now

\* Jobs at the front of the list whose TTL has run out: a prefix, since
\* the list is in completion order.
ExpiredPrefix ==
    CHOOSE n \in 0..Len(lru) :
        /\ \A i \in 1..n : Expired(lru[i])
        /\ (n < Len(lru)) => ~Expired(lru[n + 1])

\* The list a retention pass leaves.
Swept ==
    LET afterTTL == SubSeq(lru, ExpiredPrefix + 1, Len(lru))
        extra    == IF Len(afterTTL) > MaxCompleted
                        THEN Len(afterTTL) - MaxCompleted ELSE 0
    IN  SubSeq(afterTTL, extra + 1, Len(afterTTL))

\* The completion times an end may record: the clock at some instant of
\* the call, read no earlier than the last end's (a store reads it inside
\* the step that orders the ends; a tick may fall between the read and the
\* step that makes the end visible).
CompletionTimes ==
    {t \in 0..now : \A i \in DOMAIN lru : completedAt[lru[i]] <= t}

-----------------------------------------------------------------------------
Init ==
    /\ st = [j \in Jobs |-> Absent]
    /\ table = {}
    /\ taken = [j \in Jobs |-> FALSE]
    /\ started = [j \in Jobs |-> FALSE]
    /\ keyOf = [j \in Jobs |-> NoKey]
    /\ depth = 0
    /\ lru = <<>>
    /\ completedAt = [j \in Jobs |-> NoTime]
    /\ now = 0
    /\ outcome = [j \in Jobs |-> Absent]
    /\ wpc = [w \in Waiters |-> "Idle"]
    /\ wjob = [w \in Waiters |-> NoJob]
    /\ wout = [w \in Waiters |-> "none"]
    /\ rview = [r \in Readers |-> NoView]
    /\ refusedTake = [j \in Jobs |-> FALSE]
    /\ checked = {}

\* A submit's look at the bounds ahead of its admission (SplitAdmission):
\* it changes nothing the callers see.
SubmitCheck(j) ==
    /\ SplitAdmission
    /\ st[j] = Absent /\ j \notin checked
    /\ TenantRoom(j) /\ depth < MaxQueue
    /\ checked' = checked \cup {j}
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wpc, wjob, wout, rview, refusedTake>>

\* Admission, retention and insertion in one step: below both bounds, the
\* tenant's and the ledger's, evict what retention demands, insert j
\* PENDING under key k.
Admit(j, k) ==
    /\ st[j] = Absent
    /\ SplitAdmission => j \in checked
    /\ TenantRoom(j)
    /\ depth < MaxQueue
    /\ checked' = checked \ {j}
    /\ LET kept == Swept
           gone == Range(lru) \ Range(kept)
       IN
       /\ (k # NoKey) => (\A i \in (table \ gone) : keyOf[i] # k)
       /\ lru' = kept
       /\ table' = (table \ gone) \cup {j}
    /\ st' = [st EXCEPT ![j] = "PENDING"]
    /\ keyOf' = [keyOf EXCEPT ![j] = k]
    /\ depth' = depth + 1
    /\ UNCHANGED <<taken, started, completedAt, now, outcome, wpc, wjob, wout,
                   rview, refusedTake>>

\* Submit(taskID, req): a new job, or ErrQueueFull (no step).
Submit(j) == Admit(j, NoKey)

\* SubmitKeyed(key, ...): a new job holding key k when no retained job
\* holds it once retention has run; a replay or a conflict changes
\* nothing (no step).
SubmitKeyed(j, k) == Admit(j, k)

\* TakeRequest(id): the request, once, while the job is live.
TakeRequest(j) ==
    /\ j \in table
    /\ st[j] \in Live
    /\ ~taken[j]
    /\ taken' = [taken EXCEPT ![j] = TRUE]
    /\ UNCHANGED <<st, table, started, keyOf, depth, lru, completedAt, now,
                   outcome, wpc, wjob, wout, rview, refusedTake, checked>>

\* TakeRequest(id) refused with ErrRequestTaken: due only while the job is
\* live and once its request was handed out.  The refusal changes nothing
\* the other calls see; it is recorded so that a store's refusal is a step.
TakeTaken(j) ==
    /\ TakeRefusals
    /\ j \in table
    /\ st[j] \in Live
    /\ taken[j]
    /\ refusedTake' = [refusedTake EXCEPT ![j] = TRUE]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wpc, wjob, wout, rview, checked>>

\* Start(id): PENDING -> RUNNING.
Start(j) ==
    /\ j \in table
    /\ st[j] = "PENDING"
    /\ st' = [st EXCEPT ![j] = "RUNNING"]
    /\ started' = [started EXCEPT ![j] = TRUE]
    /\ UNCHANGED <<table, taken, keyOf, depth, lru, completedAt, now, outcome,
                   wpc, wjob, wout, rview, refusedTake, checked>>

\* The end of a live job, as final: the state, the completion time, the
\* one decrement, the place in the retention order and the wakeup of every
\* registered waiter, in one step.
End(j, final) ==
    /\ final \in Outcomes
    /\ j \in table
    /\ st[j] \in Live
    /\ st' = [st EXCEPT ![j] = final]
    /\ outcome' = [outcome EXCEPT ![j] = IF @ = Absent THEN final ELSE @]
    /\ \E at \in CompletionTimes :
          completedAt' = [completedAt EXCEPT ![j] = at]
    /\ depth' = depth - 1
    /\ lru' = Append(lru, j)
    /\ wpc' = [w \in Waiters |->
                 IF wpc[w] = "Blocked" /\ wjob[w] = j THEN "Woken" ELSE wpc[w]]
    /\ UNCHANGED <<table, taken, started, keyOf, now, wjob, wout, rview,
                   refusedTake, checked>>

Finish(j)  == End(j, "DONE")
Fail(j)    == End(j, "FAILED")
Timeout(j) == End(j, "TIMEOUT")

\* Snapshot(id): the job's current state.
Snapshot(r, j) ==
    /\ j \in table
    /\ rview' = [rview EXCEPT ![r] = [kind |-> "snapshot", st |-> st[j]]]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wpc, wjob, wout, refusedTake, checked>>

\* Result(id): the result of a DONE job, else ErrNotDone with a snapshot.
Result(r, j) ==
    /\ j \in table
    /\ rview' = [rview EXCEPT ![r] =
                   [kind |-> IF st[j] = "DONE" THEN "result" ELSE "snapshot",
                    st |-> st[j]]]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wpc, wjob, wout, refusedTake, checked>>

\* Wait(ctx, id), first step: a job not found returns ErrNotFound, a
\* terminal one returns at once, a live one registers the waiter.
Wait(w, j) ==
    /\ wpc[w] = "Idle"
    /\ wjob' = [wjob EXCEPT ![w] = j]
    /\ IF j \notin table
          THEN /\ wpc' = [wpc EXCEPT ![w] = "Done"]
               /\ UNCHANGED wout
          ELSE IF st[j] \in Terminal
          THEN /\ wpc' = [wpc EXCEPT ![w] = "Done"]
               /\ wout' = [wout EXCEPT ![w] = "ok"]
          ELSE /\ wpc' = [wpc EXCEPT ![w] = "Blocked"]
               /\ UNCHANGED wout
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, rview, refusedTake, checked>>

\* The waiter's context ends while it waits (woken or not: a select picks
\* at random among ready cases).
WaitCancel(w) ==
    /\ WaitDeadline
    /\ wpc[w] \in {"Blocked", "Woken"}
    /\ wpc' = [wpc EXCEPT ![w] = "Expired"]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wjob, wout, rview, refusedTake, checked>>

\* Wait returns: woken, with the terminal state and a nil error; after its
\* context ended, with the job as it is now, and ctx.Err() if it is live.
WaitReturn(w) ==
    /\ wpc[w] \in {"Woken", "Expired"}
    /\ wpc' = [wpc EXCEPT ![w] = "Done"]
    /\ wout' = [wout EXCEPT ![w] =
                  IF st[wjob[w]] \in Terminal THEN "ok" ELSE "deadline"]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wjob, rview, refusedTake, checked>>

\* Woken, the waiter finds its job evicted meanwhile and returns
\* ErrNotFound (a store that re-reads the row; JobModel's NotFound once
\* the job is terminal).
WaitGone(w) ==
    /\ wpc[w] \in {"Woken", "Expired"}
    /\ wjob[w] \notin table
    /\ st[wjob[w]] \in Terminal
    /\ wpc' = [wpc EXCEPT ![w] = "Done"]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wjob, wout, rview, refusedTake, checked>>

\* The callers ws are gone mid-call (their process died, all at once):
\* their calls return nothing to anybody.
WaitVanish(ws) ==
    /\ ws # {}
    /\ \A w \in ws : wpc[w] \in {"Idle", "Blocked", "Woken", "Expired"}
    /\ wpc' = [w \in Waiters |-> IF w \in ws THEN "Done" ELSE wpc[w]]
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   now, outcome, wjob, wout, rview, refusedTake, checked>>

\* The clock moves on.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<st, table, taken, started, keyOf, depth, lru, completedAt,
                   outcome, wpc, wjob, wout, rview, refusedTake, checked>>

\* Every job submitted has ended and every waiter returned: stutter.
Terminated ==
    /\ \A j \in Jobs : st[j] \in Terminal
    /\ \A w \in Waiters : wpc[w] = "Done"
    /\ UNCHANGED vars

Next ==
    \/ \E j \in Jobs :
          \/ SubmitCheck(j) \/ Submit(j) \/ TakeRequest(j) \/ TakeTaken(j) \/ Start(j)
          \/ Finish(j) \/ Fail(j) \/ Timeout(j)
          \/ \E k \in Keys : SubmitKeyed(j, k)
    \/ \E r \in Readers, j \in Jobs : Snapshot(r, j) \/ Result(r, j)
    \/ \E w \in Waiters :
          \/ \E j \in Jobs : Wait(w, j)
          \/ WaitCancel(w) \/ WaitReturn(w) \/ WaitGone(w)
    \/ \E ws \in SUBSET Waiters : WaitVanish(ws)
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* The seed's five invariants, as the contract states them (and the        *)
(* invariants of retention and keys).  Each name is the one JobTable.tla   *)
(* and SharedLedger.tla give the same property of their own state.         *)

Time == {NoTime} \cup (0..MaxTime)

TypeInv ==
    /\ st \in [Jobs -> States \cup {Absent}]
    /\ table \subseteq Jobs
    /\ taken \in [Jobs -> BOOLEAN]
    /\ started \in [Jobs -> BOOLEAN]
    /\ keyOf \in [Jobs -> Keys \cup {NoKey}]
    /\ depth \in Int
    /\ lru \in Seq(Jobs)
    /\ completedAt \in [Jobs -> Time]
    /\ now \in 0..MaxTime
    /\ outcome \in [Jobs -> Terminal \cup {Absent}]
    /\ wpc \in [Waiters -> {"Idle", "Blocked", "Woken", "Expired", "Done"}]
    /\ wjob \in [Waiters -> Jobs \cup {NoJob}]
    /\ wout \in [Waiters -> {"none", "ok", "deadline"}]
    /\ rview \in [Readers -> Views]
    /\ refusedTake \in [Jobs -> BOOLEAN]
    /\ checked \subseteq Jobs

\* (1) The state is one value, read whole: every view a reader returned is
\* a state a job has, and a result comes only with DONE.
ConsistentReadInv ==
    \A r \in Readers :
        /\ (rview[r].kind # "none") => (rview[r].st \in States)
        /\ (rview[r].kind = "result") => (rview[r].st = "DONE")

\* (2) No lost wakeup: no waiter is blocked on a terminal job, and Wait
\* returns nil only with a terminal state (WaitTerminal), ctx.Err() only
\* with a live one (WaitDeadlineOnlyLive).
NoLostWakeupInv ==
    /\ \A w \in Waiters :
          (wpc[w] = "Blocked") => (st[wjob[w]] \in Live)
    /\ \A w \in Waiters :
          (wpc[w] = "Woken") => (st[wjob[w]] \in Terminal)

\* (3) Admission is one step against the bound.
DepthBoundInv ==
    0 <= depth /\ depth <= MaxQueue

\* (3') The two-level bound: no tenant over its bound and the ledger not
\* over its own.
TenantBoundInv ==
    /\ TenantMax > 0 => \A s \in Shares : TenantLive(s) <= TenantMax
    /\ depth <= MaxQueue

\* (4) The end is the only decrement, once per job: depth counts the live
\* jobs, and a terminal state is absorbing.
DepthInv ==
    depth = Cardinality({j \in Jobs : st[j] \in Live})

TerminalAbsorbingInv ==
    \A j \in Jobs : (outcome[j] # Absent) => (st[j] = outcome[j])

\* (5) The table holds the map and the retention list only, and they agree:
\* only terminal jobs leave the map, the list holds each terminal retained
\* job once, in completion order.
NoEvictNonTerminalInv ==
    \A j \in Jobs : (st[j] \in Live) => (j \in table)

RetentionListInv ==
    /\ \A i, k \in DOMAIN lru : (i < k) =>
          (/\ lru[i] # lru[k]
           /\ completedAt[lru[i]] <= completedAt[lru[k]])
    /\ \A j \in table : (j \in Range(lru)) = (st[j] \in Terminal)
    /\ \A j \in Jobs : (completedAt[j] # NoTime) = (st[j] \in Terminal)

\* Retention keeps a terminal job until its TTL has run out, unless the
\* LRU bound pushes it out first: a job left the table while it would still
\* be within its TTL (completedAt + TTL > now; the HTTP API's expires_at is
\* completedAt + TTL) only if the list holds at least MaxCompleted jobs,
\* each completed after it.  JobTable.tla's invariant of the same name.
NoEarlyEvictionInv ==
    \A j \in Jobs :
        (st[j] # Absent /\ j \notin table /\ completedAt[j] + TTL > now)
            => (Len(lru) >= MaxCompleted)

\* Only Start marks a job started, so a started job left PENDING through
\* RUNNING.
StartedInv ==
    \A j \in Jobs : started[j] => (st[j] \in {"RUNNING"} \cup Terminal)

\* At most one retained job holds each key (IdempotencyKeys.tla's KeyInv).
KeyInv ==
    \A i, j \in table :
        (i # j /\ keyOf[i] # NoKey) => (keyOf[i] # keyOf[j])

\* A TakeRequest is refused with ErrRequestTaken only once the request was
\* handed out.
RefusedTakeInv ==
    \A j \in Jobs : refusedTake[j] => taken[j]

\* What Wait returned agrees with the job it waited on.
WaitTerminalInv ==
    \A w \in Waiters :
        (wout[w] = "ok") => (st[wjob[w]] \in Terminal)

-----------------------------------------------------------------------------
(* For TLC: the state machine as an action property.                       *)

Transitions ==
    {<<Absent, "PENDING">>, <<"PENDING", "RUNNING">>}
        \cup (Live \X Terminal)

StateMachineProp ==
    [][\A j \in Jobs :
          (st'[j] # st[j]) => (<<st[j], st'[j]>> \in Transitions)]_vars

=============================================================================
