------------------------------ MODULE JobTable ------------------------------
(***************************************************************************)
(* The job table of package jobtable: admission, the job state machine,    *)
(* retention (TTL, then LRU) and waiting, as concurrent threads with one   *)
(* program counter each.                                                   *)
(*                                                                         *)
(* Shared memory, as in the Go code:                                       *)
(*   depth           atomic.Int32, admitted non-terminal jobs; lock-free   *)
(*   table mutex     guards the id map, the LRU list and the tenants'      *)
(*                   live counts (tlive)                                   *)
(*   job mutex       one per job; guards the payload (req, res, err), the  *)
(*                   timestamps and the done channel                       *)
(*   state           atomic.Int32 per job, stored only under the job       *)
(*                   mutex, loaded without a lock                          *)
(* Lock order: table before job, never the reverse.                        *)
(*                                                                         *)
(* Every action is named after the Go function (or the step of it) that    *)
(* it abstracts.  A step is one atomic effect: a lock-free atomic          *)
(* operation, or a critical section whose effects other threads can only   *)
(* see as a whole.  A critical section that writes the payload and then    *)
(* stores the state is two steps, with the job mutex held between them,    *)
(* so that a reader that skipped the job mutex would see the payload       *)
(* without the state.  Where the code takes no lock, neither does the      *)
(* model: a lookup (the id map is probed without a lock and written only   *)
(* under the table mutex, by Submit's insertion, one step here), a read of *)
(* a terminal job's final snapshot, eviction's read of completedAt.  A     *)
(* lookup is merged into the job critical section that follows it: between *)
(* the two only the eviction of a terminal job can happen, on which every  *)
(* job critical section behaves the same.                                  *)
(*                                                                         *)
(* The constant Defect puts back one defect (the seed's D1-D4, or a later  *)
(* one); it switches the actions of that defect only, and the              *)
(* configuration of that defect expects the property that names it to      *)
(* fail.  Misusers and WaitDeadline add callers that misuse the API and    *)
(* waits whose context ends.                                               *)
(*                                                                         *)
(* Tenants: every job belongs to one (Tenants: the bounded ones, Shares,   *)
(* each as the set of its jobs, and the rest, of no bound), and the table  *)
(* counts each tenant's live jobs under the table mutex (tlive).  A        *)
(* submission of a bounded tenant (SubmitWith with TenantMaxQueue, i.e.    *)
(* submitLocked) is one critical section of the table mutex: the tenant's  *)
(* check (SubmitLock), then, the mutex still held, the CAS of depth, the   *)
(* eviction, the insertion and the count (SubmitAdmit); the terminal       *)
(* transition uncounts in the step that stores the state.  Any other       *)
(* submission is counted at its insertion.  With Shares = {} and TenantMax *)
(* = 0 every job is of one tenant with no bound: the model of before.      *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,          \* task ids (model values)
    Submitters,    \* threads calling Submit
    Runners,       \* workers: Start, TakeRequest, then Finish/Fail/Timeout
    Timers,        \* deadline threads: one Timeout each, racing the runners
    Pollers,       \* threads calling Snapshot, then Result
    Waiters,       \* threads calling Wait
    Misusers,      \* a second worker on a job: Start, TakeRequest, Finish
    MaxQueue,      \* Config.MaxQueue: admitted non-terminal jobs at most
    MaxCompleted,  \* Config.MaxCompleted: terminal jobs kept beyond TTL
    TTL,           \* Config.JobTTL, in clock ticks
    MaxTime,       \* bound of the abstract clock
    RunnerOutcomes,\* terminal states the runners' own calls may produce
    WaitDeadline,  \* TRUE: a waiter's context may end while it waits
    Shares,        \* the bounded tenants, each as the set of its jobs
    TenantMax,     \* each bounded tenant's TenantMaxQueue; 0: none bounded
    Defect         \* "none", or the defect to put back (see Defects)

Threads == Submitters \cup Runners \cup Timers \cup Pollers \cup Waiters
               \cup Misusers

\* The seed's D1-D4; the request kept after the end; the clock read outside
\* the job mutex; the wakeup never sent (liveness); TTL eviction one tick
\* early; no LRU bound.
Defects == {"none", "D1", "D2", "D3", "D4", "keep_request",
            "clock_outside_lock", "no_wakeup", "ttl_early", "no_lru_bound"}

\* MaxCompleted is at least 1: Go maps 0 to DefaultMaxCompleted (1024), so
\* 0 would model no configuration that exists.
ASSUME
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat \ {0}
    /\ TTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ RunnerOutcomes \subseteq {"DONE", "FAILED", "TIMEOUT"}
    /\ RunnerOutcomes # {}
    /\ WaitDeadline \in BOOLEAN
    /\ Shares \subseteq SUBSET Jobs
    /\ \A s1, s2 \in Shares : s1 # s2 => s1 \cap s2 = {}
    /\ TenantMax \in Nat
    /\ Defect \in Defects

NoThread == "nobody"   \* owner of a free mutex
NoJob    == "nojob"    \* a thread's job before it picks one
NoTime   == -1         \* a timestamp that is not set

Terminal == {"DONE", "FAILED", "TIMEOUT"}
States   == {"PENDING", "RUNNING"} \cup Terminal
Absent   == "ABSENT"   \* state of an id that was never inserted

\* The state changes the Go state machine allows.
Transitions ==
    {<<Absent, "PENDING">>, <<"PENDING", "RUNNING">>}
        \cup ({"PENDING", "RUNNING"} \X Terminal)

\* What a refused call can be recorded as (history refusals): TakeRequest
\* refused with ErrTerminal or ErrRequestTaken, Start refused with
\* ErrNotPending on a RUNNING job.
Refusals == {"TakeTerminal", "TakeTaken", "StartRunning", "TenantFull",
             "TenantQueueFull"}

\* The tenants, each as the set of its jobs: the bounded ones (Shares) and
\* one of the jobs in no share, which has no bound.
Tenants == {c \in Shares \cup {Jobs \ UNION Shares} : c # {}}

\* The tenant of job j.
Owner(j) == CHOOSE c \in Tenants : j \in c

\* A submission of job j is held to its tenant's bound (submitLocked).
Bounded(j) == TenantMax > 0 /\ Owner(j) \in Shares

VARIABLES
    \* shared memory
    depth,        \* Table.depth
    tableOwner,   \* Table.mu
    table,        \* DOMAIN of Table.jobs (the id map)
    lru,          \* Table.lru, terminal jobs in completion order
    queue,        \* ids handed to the runners after Submit (the work channel)
    jobOwner,     \* job.mu, per job
    state,        \* job.state, per job
    req,          \* job.req is still held (not taken, not released)
    res,          \* job.res is set
    err,          \* job.err is set
    createdAt,    \* job.createdAt
    startedAt,    \* job.startedAt
    completedAt,  \* job.completedAt
    done,         \* job.done: "nil", "open" or "closed"
    now,          \* the injected clock
    tlive,        \* Table.tenants[..].live per tenant, under the table mutex
    \* thread-local
    pc,           \* program counter
    tjob,         \* the job a thread works on
    dval,         \* a depth value a thread loaded
    tnow,         \* a clock value a thread read (clock_outside_lock)
    tfinal,       \* the terminal state a terminator is writing
    view,         \* what a reader returned
    \* history, for the invariants only
    claimed,      \* ids a submitter has picked
    admitted,     \* ids whose admission took a slot of depth
    decs,         \* depth decrements per job
    outcome,      \* first terminal state per job
    runFrom,      \* states from which a job entered RUNNING
    takes,        \* successful TakeRequest calls per job
    refusals,     \* which kinds of refusal have happened (Refusals)
    expired,      \* waiters whose context has ended
    evicted,      \* ids removed from the map
    sweepOK,      \* every eviction pass so far left what retention promises
    callsOK       \* every call so far returned what the contract says

shared  == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, createdAt, startedAt, completedAt, done, now, tlive>>
local   == <<pc, tjob, dval, tnow, tfinal, view>>
history == <<claimed, admitted, decs, outcome, runFrom, takes, refusals,
             expired, evicted, sweepOK, callsOK>>
\* Written out flat: tla-checker does not see through a tuple of tuples.
vars    == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, createdAt, startedAt, completedAt, done, now, tlive, pc,
             tjob, dval, tnow, tfinal, view, claimed, admitted, decs,
             outcome, runFrom, takes, refusals, expired, evicted, sweepOK,
             callsOK>>

-----------------------------------------------------------------------------
(* Views: what Snapshot, Result and Wait hand back.                        *)

NoView == [kind |-> "none", st |-> Absent, res |-> FALSE, err |-> FALSE,
           at |-> FALSE]

\* The copy Snapshot (and Wait, on return) makes under the job mutex.
SnapshotOf(j) == [kind |-> "snapshot", st |-> state[j], res |-> FALSE,
                  err |-> err[j], at |-> completedAt[j] # NoTime]

\* kind: "snapshot" (Snapshot, or Wait with a nil error), "deadline" (Wait's
\* snapshot returned with ctx.Err()), "result" (Result with no error).
Views == [kind : {"none", "snapshot", "deadline", "result"},
          st : States \cup {Absent}, res : BOOLEAN, err : BOOLEAN,
          at : BOOLEAN]

-----------------------------------------------------------------------------
(* The API contract: what call c returns on job j in the state it finds,   *)
(* stated apart from how the actions compute it (whether the request was   *)
(* taken comes from the history takes, not from req).  c is "Start",       *)
(* "TakeRequest" or "End" (Finish, Fail and Timeout).                      *)

Contract(c, j) ==
    IF j \notin table THEN "ErrNotFound"
    ELSE IF c = "Start"
         THEN (IF state[j] = "PENDING" THEN "ok" ELSE "ErrNotPending")
    ELSE IF state[j] \in Terminal THEN "ErrTerminal"
    ELSE IF c = "TakeRequest" /\ takes[j] > 0 THEN "ErrRequestTaken"
    ELSE "ok"

-----------------------------------------------------------------------------
(* Retention: evictLocked(now), run by Submit under the table mutex.       *)

\* expired(j, now, ttl): now - completedAt >= TTL.  ttl_early: one tick
\* early.
Expired(j) ==
    IF Defect = "ttl_early" THEN completedAt[j] + TTL <= now + 1
                            ELSE completedAt[j] + TTL <= now

\* Number of jobs at the front of the LRU list whose TTL has run out.  The
\* list is in completion order, so they form a prefix.  Each test reads
\* completedAt without the job's mutex (completedLocked): a listed job is
\* terminal, its final snapshot frozen, and it was listed under the table
\* mutex after that snapshot was written.
ExpiredPrefix ==
    CHOOSE n \in 0..Len(lru) :
        /\ \A i \in 1..n : Expired(lru[i])
        /\ (n < Len(lru)) => ~Expired(lru[n + 1])

\* The LRU list that evictLocked(now) leaves: TTL first, then the oldest
\* beyond MaxCompleted (no_lru_bound: no second pass).
EvictLocked ==
    LET afterTTL == SubSeq(lru, ExpiredPrefix + 1, Len(lru))
        extra    == IF Len(afterTTL) > MaxCompleted /\ Defect # "no_lru_bound"
                        THEN Len(afterTTL) - MaxCompleted ELSE 0
    IN  SubSeq(afterTTL, extra + 1, Len(afterTTL))

Range(s) == {s[i] : i \in DOMAIN s}

\* What an eviction pass must leave, stated apart from how EvictLocked
\* computes it: at most MaxCompleted terminal jobs, none past its TTL.
SweepPost(kept) ==
    /\ Len(kept) <= MaxCompleted
    /\ \A i \in DOMAIN kept : completedAt[kept[i]] + TTL > now

-----------------------------------------------------------------------------
Init ==
    /\ depth = 0
    /\ tableOwner = NoThread
    /\ table = {}
    /\ lru = <<>>
    /\ queue = {}
    /\ jobOwner = [j \in Jobs |-> NoThread]
    /\ state = [j \in Jobs |-> Absent]
    /\ req = [j \in Jobs |-> FALSE]
    /\ res = [j \in Jobs |-> FALSE]
    /\ err = [j \in Jobs |-> FALSE]
    /\ createdAt = [j \in Jobs |-> NoTime]
    /\ startedAt = [j \in Jobs |-> NoTime]
    /\ completedAt = [j \in Jobs |-> NoTime]
    /\ done = [j \in Jobs |-> "nil"]
    /\ now = 0
    /\ tlive = [c \in Tenants |-> 0]
    /\ pc = [t \in Threads |->
               CASE t \in Submitters -> "SubmitLoad"
                 [] t \in Runners    -> "Start"
                 [] t \in Timers     -> "Timeout"
                 [] t \in Pollers    -> "Snapshot"
                 [] t \in Waiters    -> "WaitCheck"
                 [] t \in Misusers   -> "MisuseStart"]
    /\ tjob = [t \in Threads |-> NoJob]
    /\ dval = [t \in Threads |-> 0]
    /\ tnow = [t \in Threads |-> 0]
    /\ tfinal = [t \in Threads |-> Absent]
    /\ view = [t \in Threads |-> NoView]
    /\ claimed = {}
    /\ admitted = {}
    /\ decs = [j \in Jobs |-> 0]
    /\ outcome = [j \in Jobs |-> Absent]
    /\ runFrom = {}
    /\ takes = [j \in Jobs |-> 0]
    /\ refusals = {}
    /\ expired = {}
    /\ evicted = {}
    /\ sweepOK = TRUE
    /\ callsOK = TRUE

TableFree == tableOwner = NoThread
JobFree(j) == j \notin table \/ jobOwner[j] = NoThread

-----------------------------------------------------------------------------
(* Submit(taskID, req)                                                     *)

\* The tenants with an id no submitter has picked.
UnclaimedTenants == {c \in Tenants : ~(c \subseteq claimed)}

\* The id a Submit works on: the one it holds on a retry, else the next
\* unused one of a tenant, in a fixed order within each tenant.  The ids
\* of one tenant are interchangeable (Config.NewID draws them at random
\* and no action or property tells them apart), so a fixed order loses no
\* behaviour up to renaming; it stands in for the symmetry reduction
\* tla-checker lacks.
NextId(s) ==
    IF tjob[s] # NoJob THEN {tjob[s]}
    ELSE IF claimed = Jobs THEN {}
    ELSE {CHOOSE j \in c \ claimed : TRUE : c \in UnclaimedTenants}

\* d := depth.Load(); if d >= MaxQueue -> ErrQueueFull.  A fresh call takes
\* a new id (NextId); a CAS retry keeps its id.
\* D2: the same read, unsynchronised, feeds a plain store of d+1.
SubmitLoad(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ \E j \in NextId(s) :
          /\ ~Bounded(j)
          /\ claimed' = claimed \cup {j}
          /\ IF depth >= MaxQueue
                THEN /\ tjob' = [tjob EXCEPT ![s] = NoJob]
                     /\ UNCHANGED <<pc, dval>>
                ELSE /\ tjob' = [tjob EXCEPT ![s] = j]
                     /\ dval' = [dval EXCEPT ![s] = depth]
                     /\ pc' = [pc EXCEPT ![s] =
                                 CASE Defect = "D2" -> "SubmitStore"
                                   [] Defect = "D3" -> "SubmitIncrement"
                                   [] OTHER         -> "SubmitCAS"]
    /\ UNCHANGED <<shared, tnow, tfinal, view, admitted, decs, outcome,
                   runFrom, takes, refusals, expired, evicted, sweepOK,
                   callsOK>>

\* depth.CompareAndSwap(d, d+1): admitted, or back to SubmitLoad.
SubmitCAS(s) ==
    /\ pc[s] = "SubmitCAS"
    /\ IF depth = dval[s]
          THEN /\ depth' = depth + 1
               /\ admitted' = admitted \cup {tjob[s]}
               /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
          ELSE /\ pc' = [pc EXCEPT ![s] = "SubmitLoad"]
               /\ UNCHANGED <<depth, admitted>>
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   tnow, tfinal, view, claimed, decs, outcome, runFrom,
                   takes, refusals, expired, evicted, sweepOK, callsOK, tlive>>

\* D2: the update is computed from the unsynchronised read: depth = d + 1.
SubmitStore(s) ==
    /\ pc[s] = "SubmitStore"
    /\ depth' = dval[s] + 1
    /\ admitted' = admitted \cup {tjob[s]}
    /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   tnow, tfinal, view, claimed, decs, outcome, runFrom,
                   takes, refusals, expired, evicted, sweepOK, callsOK, tlive>>

\* D3: the queue-full check and the increment are two separate steps.
SubmitIncrement(s) ==
    /\ pc[s] = "SubmitIncrement"
    /\ depth' = depth + 1
    /\ admitted' = admitted \cup {tjob[s]}
    /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   tnow, tfinal, view, claimed, decs, outcome, runFrom,
                   takes, refusals, expired, evicted, sweepOK, callsOK, tlive>>

\* Under the table mutex: evictLocked(now), then insertLocked: the job j
\* with createdAt, counted in its tenant's live jobs (countLocked).
Insert(j) ==
    /\ LET kept == EvictLocked
           gone == Range(lru) \ Range(kept)
       IN
       /\ lru' = kept
       /\ table' = (table \ gone) \cup {j}
       /\ evicted' = evicted \cup gone
       /\ sweepOK' = (sweepOK /\ SweepPost(kept))
       /\ queue' = queue \cup {j}
       /\ state' = [state EXCEPT ![j] = "PENDING"]
       /\ req' = [req EXCEPT ![j] = TRUE]
       /\ createdAt' = [createdAt EXCEPT ![j] = now]
       /\ tlive' = [tlive EXCEPT ![Owner(j)] = @ + 1]

\* Under the table mutex: the insertion, unlock.
SubmitInsert(s) ==
    /\ pc[s] = "SubmitInsert"
    /\ TableFree
    /\ Insert(tjob[s])
    /\ tjob' = [tjob EXCEPT ![s] = NoJob]
    /\ pc' = [pc EXCEPT ![s] = "SubmitLoad"]
    /\ UNCHANGED <<depth, tableOwner, jobOwner, res, err, startedAt,
                   completedAt, done, now, dval, tnow, tfinal, view, claimed,
                   admitted, decs, outcome, runFrom, takes, refusals, expired,
                   callsOK>>

\* A submission of a bounded tenant (submitLocked), first step: lock the
\* table mutex; a tenant with TenantMax live jobs -> ErrTenantQueueFull,
\* and unlock; otherwise keep the mutex for SubmitAdmit.  A fresh id, as
\* SubmitLoad's.
SubmitLock(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ TableFree
    /\ \E j \in NextId(s) :
          /\ Bounded(j)
          /\ claimed' = claimed \cup {j}
          /\ IF tlive[Owner(j)] >= TenantMax
                THEN /\ refusals' = refusals \cup {"TenantFull"}
                     /\ UNCHANGED <<pc, tjob, tableOwner>>
                ELSE /\ tableOwner' = s
                     /\ tjob' = [tjob EXCEPT ![s] = j]
                     /\ pc' = [pc EXCEPT ![s] = "SubmitAdmit"]
                     /\ UNCHANGED refusals
    /\ UNCHANGED <<depth, table, lru, queue, jobOwner, state, req, res, err,
                   createdAt, startedAt, completedAt, done, now, tlive, dval,
                   tnow, tfinal, view, admitted, decs, outcome, runFrom, takes,
                   expired, evicted, sweepOK, callsOK>>

\* Second step, the table mutex still held: admit (its CAS loop on depth
\* is one step here: between a load and its CAS only another Submit's CAS
\* can change depth, and that only sends the loop round again); below
\* MaxQueue, the eviction and the insertion (Insert); at MaxQueue,
\* ErrQueueFull.  Unlock.
SubmitAdmit(s) ==
    LET j == tjob[s] IN
    /\ pc[s] = "SubmitAdmit"
    /\ tableOwner = s
    /\ IF depth < MaxQueue
          THEN /\ depth' = depth + 1
               /\ admitted' = admitted \cup {j}
               /\ Insert(j)
               /\ UNCHANGED refusals
          ELSE /\ refusals' = refusals \cup {"TenantQueueFull"}
               /\ UNCHANGED <<depth, admitted, lru, table, evicted, sweepOK,
                              queue, state, req, createdAt, tlive>>
    /\ tableOwner' = NoThread
    /\ tjob' = [tjob EXCEPT ![s] = NoJob]
    /\ pc' = [pc EXCEPT ![s] = "SubmitLoad"]
    /\ UNCHANGED <<jobOwner, res, err, startedAt, completedAt, done, now, dval,
                   tnow, tfinal, view, claimed, decs, outcome, runFrom, takes,
                   expired, callsOK>>

\* A submitter with no id left to submit stops.
SubmitDone(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ tjob[s] = NoJob
    /\ claimed = Jobs
    /\ pc' = [pc EXCEPT ![s] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, view, history>>

-----------------------------------------------------------------------------
(* Start(id) and TakeRequest(id), each one critical section of the job     *)
(* mutex after the lookup.                                                 *)

\* Start on job j by thread t: under the job mutex, read the clock (at)
\* into startedAt and move the job from PENDING to RUNNING, and only from
\* PENDING (a job that timed out while queued stays terminal); otherwise
\* ErrNotPending.  Thread t goes on to okNext with job j, or, refused, to
\* noNext with job noJob.
StartJob(t, j, at, okNext, noNext, noJob) ==
    /\ JobFree(j)
    /\ LET out == IF j \notin table THEN "ErrNotFound"
                  ELSE IF state[j] = "PENDING" THEN "ok"
                  ELSE "ErrNotPending"
       IN
       /\ callsOK' = (callsOK /\ out = Contract("Start", j))
       /\ refusals' = IF out = "ErrNotPending" /\ state[j] = "RUNNING"
                         THEN refusals \cup {"StartRunning"} ELSE refusals
       /\ IF out = "ok"
             THEN /\ state' = [state EXCEPT ![j] = "RUNNING"]
                  /\ startedAt' = [startedAt EXCEPT ![j] = at]
                  /\ runFrom' = runFrom \cup {state[j]}
                  /\ tjob' = [tjob EXCEPT ![t] = j]
                  /\ pc' = [pc EXCEPT ![t] = okNext]
             ELSE /\ tjob' = [tjob EXCEPT ![t] = noJob]
                  /\ pc' = [pc EXCEPT ![t] = noNext]
                  /\ UNCHANGED <<state, startedAt, runFrom>>

\* TakeRequest on job j by thread t, under the job mutex: a terminal job ->
\* ErrTerminal (its request was released by the terminal transition); a
\* request already moved out -> ErrRequestTaken; otherwise move it out.
\* Thread t goes on to next, whatever the outcome.
TakeJob(t, j, next) ==
    /\ JobFree(j)
    /\ LET out == IF j \notin table THEN "ErrNotFound"
                  ELSE IF state[j] \in Terminal THEN "ErrTerminal"
                  ELSE IF ~req[j] THEN "ErrRequestTaken"
                  ELSE "ok"
       IN
       /\ callsOK' = (callsOK /\ out = Contract("TakeRequest", j))
       /\ refusals' =
             CASE out = "ErrTerminal" -> refusals \cup {"TakeTerminal"}
               [] out = "ErrRequestTaken" -> refusals \cup {"TakeTaken"}
               [] OTHER -> refusals
       /\ IF out = "ok"
             THEN /\ req' = [req EXCEPT ![j] = FALSE]
                  /\ takes' = [takes EXCEPT ![j] = @ + 1]
             ELSE UNCHANGED <<req, takes>>
    /\ pc' = [pc EXCEPT ![t] = next]

-----------------------------------------------------------------------------
(* The runner: Start(id), TakeRequest(id), then Finish, Fail or Timeout.   *)

\* The runner receives an id from the work channel and calls Start; a job
\* it cannot start it drops, and it receives the next id.
\* clock_outside_lock: the lookup, then the clock read (StartClock), then
\* the job's critical section (StartLock) are three steps, as in the Go
\* code before the fix.
Start(r) ==
    /\ pc[r] = "Start"
    /\ \E j \in queue :
          /\ queue' = queue \ {j}
          /\ IF Defect = "clock_outside_lock"
                THEN /\ IF j \in table
                           THEN /\ tjob' = [tjob EXCEPT ![r] = j]
                                /\ pc' = [pc EXCEPT ![r] = "StartClock"]
                           ELSE UNCHANGED <<tjob, pc>>
                     /\ UNCHANGED <<state, startedAt, runFrom, refusals,
                                    callsOK>>
                ELSE StartJob(r, j, now, "TakeRequest", "Start", NoJob)
    /\ UNCHANGED <<depth, tableOwner, table, lru, jobOwner, req, res, err,
                   createdAt, completedAt, done, now, dval, tnow, tfinal,
                   view, claimed, admitted, decs, outcome, takes, expired,
                   evicted, sweepOK, tlive>>

\* clock_outside_lock only: now := t.cfg.Now(), no lock held.
StartClock(r) ==
    /\ pc[r] = "StartClock"
    /\ tnow' = [tnow EXCEPT ![r] = now]
    /\ pc' = [pc EXCEPT ![r] = "StartLock"]
    /\ UNCHANGED <<shared, tjob, dval, tfinal, view, history>>

\* clock_outside_lock only: under the job mutex, PENDING -> RUNNING with the
\* startedAt read before the lock.
StartLock(r) ==
    /\ pc[r] = "StartLock"
    /\ StartJob(r, tjob[r], tnow[r], "TakeRequest", "Start", NoJob)
    /\ tnow' = [tnow EXCEPT ![r] = 0]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, req, res,
                   err, createdAt, completedAt, done, now, dval, tfinal,
                   view, claimed, admitted, decs, outcome, takes, expired,
                   evicted, sweepOK, tlive>>

\* Once every submitter has stopped and the channel is drained, the
\* runner's loop ends.
RunnerDone(r) ==
    /\ pc[r] = "Start"
    /\ queue = {}
    /\ \A s \in Submitters : pc[s] = "Done"
    /\ pc' = [pc EXCEPT ![r] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, view, history>>

\* The runner's TakeRequest; whatever it returns, the runner goes on to its
\* terminal call.
TakeRequest(r) ==
    /\ pc[r] = "TakeRequest"
    /\ TakeJob(r, tjob[r], "Terminate")
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   dval, tnow, tfinal, view, claimed, admitted, decs,
                   outcome, runFrom, expired, evicted, sweepOK, tlive>>

-----------------------------------------------------------------------------
(* The misuser: a second worker on a job it should leave alone (a message  *)
(* delivered twice, a client retrying by hand).  It picks a job of the     *)
(* map, calls Start and then TakeRequest, each of which it may also skip,  *)
(* whatever they return, and then Finish: a second Start, a Start of a     *)
(* RUNNING job, a second TakeRequest and a Finish of a job never started   *)
(* are all among its runs.  Three calls at most, so the model stays        *)
(* finite; its Finish always comes, so no job is left RUNNING by it.       *)

MisuseStart(m) ==
    /\ pc[m] = "MisuseStart"
    /\ \E j \in table :
          \/ StartJob(m, j, now, "MisuseTake", "MisuseTake", j)
          \/ /\ tjob' = [tjob EXCEPT ![m] = j]
             /\ pc' = [pc EXCEPT ![m] = "MisuseTake"]
             /\ UNCHANGED <<state, startedAt, runFrom, refusals, callsOK>>
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, req, res,
                   err, createdAt, completedAt, done, now, dval, tnow, tfinal,
                   view, claimed, admitted, decs, outcome, takes, expired,
                   evicted, sweepOK, tlive>>

MisuseTake(m) ==
    /\ pc[m] = "MisuseTake"
    /\ \/ TakeJob(m, tjob[m], "Terminate")
       \/ /\ pc' = [pc EXCEPT ![m] = "Terminate"]
          /\ UNCHANGED <<req, takes, refusals, callsOK>>
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   dval, tnow, tfinal, view, claimed, admitted, decs,
                   outcome, runFrom, expired, evicted, sweepOK, tlive>>

-----------------------------------------------------------------------------
(* The terminal transition: Finish, Fail and Timeout.                      *)

\* Where a thread goes once its terminal call returns.
AfterTerminate(t) == IF t \in Runners THEN "Start" ELSE "Done"

\* The terminal transition (Finish, Fail and Timeout share it), first step,
\* taken holding the table mutex: look the id up, lock the job; a job not
\* found or terminal is left alone (ErrNotFound, ErrTerminal) and both
\* mutexes are released; otherwise read the clock (at) into completedAt,
\* write res or err and release the request (keep_request: keep it),
\* keeping both mutexes: the state is stored in the second step.
TerminateWrite(t, j, final, at) ==
    /\ JobFree(j)
    /\ LET out == IF j \notin table THEN "ErrNotFound"
                  ELSE IF state[j] \in Terminal THEN "ErrTerminal"
                  ELSE "ok"
       IN
       /\ callsOK' = (callsOK /\ out = Contract("End", j))
       /\ IF out # "ok"
             THEN /\ tableOwner' = NoThread
                  /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
                  /\ tjob' = [tjob EXCEPT ![t] = NoJob]
                  /\ UNCHANGED <<jobOwner, req, res, err, completedAt, tfinal>>
             ELSE /\ tableOwner' = t
                  /\ jobOwner' = [jobOwner EXCEPT ![j] = t]
                  /\ res' = [res EXCEPT ![j] = (final = "DONE")]
                  /\ err' = [err EXCEPT ![j] = (final # "DONE")]
                  /\ completedAt' = [completedAt EXCEPT ![j] = at]
                  /\ req' = IF Defect = "keep_request" THEN req
                            ELSE [req EXCEPT ![j] = FALSE]
                  /\ tfinal' = [tfinal EXCEPT ![t] = final]
                  /\ tjob' = [tjob EXCEPT ![t] = j]
                  /\ pc' = [pc EXCEPT ![t] = "TerminateRelease"]
    /\ tnow' = [tnow EXCEPT ![t] = 0]
    /\ UNCHANGED <<depth, table, lru, queue, state, createdAt, startedAt, done,
                   now, dval, view, claimed, admitted, decs, outcome, runFrom,
                   takes, refusals, expired, evicted, sweepOK, tlive>>

\* A thread's terminal call on its job is ready: the whole first step, the
\* clock read under both mutexes; or, after TerminateClock
\* (clock_outside_lock), the job's critical section with the clock value
\* read before it.
TerminateReady(t) ==
    \/ pc[t] = "Terminate" /\ Defect # "clock_outside_lock" /\ TableFree
    \/ pc[t] = "TerminateLock"
TerminateAt(t) == IF pc[t] = "TerminateLock" THEN tnow[t] ELSE now

\* A runner's Finish, or a misuser's.
Finish(t) ==
    /\ (t \in Misusers \/ "DONE" \in RunnerOutcomes)
    /\ TerminateReady(t)
    /\ TerminateWrite(t, tjob[t], "DONE", TerminateAt(t))
Fail(r) ==
    /\ "FAILED" \in RunnerOutcomes
    /\ TerminateReady(r)
    /\ TerminateWrite(r, tjob[r], "FAILED", TerminateAt(r))
\* A runner's own deadline, or a timer's deadline on any id.
Timeout(t) ==
    \/ /\ (t \in Timers \/ "TIMEOUT" \in RunnerOutcomes)
       /\ TerminateReady(t)
       /\ TerminateWrite(t, tjob[t], "TIMEOUT", TerminateAt(t))
    \/ /\ pc[t] = "Timeout"
       /\ Defect # "clock_outside_lock"
       /\ TableFree
       /\ \E j \in Jobs : TerminateWrite(t, j, "TIMEOUT", now)

\* clock_outside_lock only: t.mu.Lock(), now := t.cfg.Now(), the lookup;
\* the job mutex is taken in the next step.
TerminateClock(t) ==
    /\ Defect = "clock_outside_lock"
    /\ pc[t] \in {"Terminate", "Timeout"}
    /\ TableFree
    /\ tableOwner' = t
    /\ tnow' = [tnow EXCEPT ![t] = now]
    /\ \E j \in IF pc[t] = "Timeout" THEN Jobs ELSE {tjob[t]} :
          tjob' = [tjob EXCEPT ![t] = j]
    /\ pc' = [pc EXCEPT ![t] = "TerminateLock"]
    /\ UNCHANGED <<depth, table, lru, queue, jobOwner, state, req, res, err,
                   createdAt, startedAt, completedAt, done, now, dval, tfinal,
                   view, history, tlive>>

\* Second step of terminate, still under both mutexes: state.Store(final)
\* and depth.Add(-1) (terminateLocked), close done if a waiter made it
\* (wakeLocked; no_wakeup: never), unlock the job, take it out of its
\* tenant's live jobs (uncountLocked), push it onto the LRU list
\* (retainLocked), unlock the table.
TerminateRelease(t) ==
    LET j == tjob[t] IN
    /\ pc[t] = "TerminateRelease"
    /\ state' = [state EXCEPT ![j] = tfinal[t]]
    /\ outcome' = [outcome EXCEPT ![j] = tfinal[t]]
    /\ tlive' = [tlive EXCEPT ![Owner(j)] = @ - 1]
    /\ depth' = depth - 1
    /\ decs' = [decs EXCEPT ![j] = @ + 1]
    /\ done' = IF done[j] = "open" /\ Defect # "no_wakeup"
                  THEN [done EXCEPT ![j] = "closed"] ELSE done
    /\ jobOwner' = [jobOwner EXCEPT ![j] = NoThread]
    /\ lru' = Append(lru, j)
    /\ tableOwner' = NoThread
    /\ tfinal' = [tfinal EXCEPT ![t] = Absent]
    /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
    /\ tjob' = [tjob EXCEPT ![t] = NoJob]
    /\ UNCHANGED <<table, queue, req, res, err, createdAt, startedAt,
                   completedAt, now, dval, tnow, view, claimed, admitted,
                   runFrom, takes, refusals, expired, evicted, sweepOK,
                   callsOK>>

-----------------------------------------------------------------------------
(* Readers: Snapshot(id), Result(id), Wait(ctx, id).                       *)

\* Lookup, then copy state, err and timestamps: without the job mutex if
\* the state loaded is terminal (job.final: the state is stored after the
\* final snapshot is written, which nothing writes again), under it if not.
\* D1: the copy is made without the job mutex, the payload first and the
\* state after it.
Snapshot(p) ==
    /\ pc[p] = "Snapshot"
    /\ \E j \in Jobs :
          /\ tjob' = [tjob EXCEPT ![p] = j]
          /\ IF j \notin table
                THEN /\ pc' = [pc EXCEPT ![p] = "Result"]
                     /\ UNCHANGED view
                ELSE IF Defect = "D1"
                THEN /\ view' =
                          [view EXCEPT ![p] =
                              [NoView EXCEPT !.err = err[j],
                                             !.at = completedAt[j] # NoTime]]
                     /\ pc' = [pc EXCEPT ![p] = "SnapshotState"]
                ELSE /\ (state[j] \in Terminal \/ JobFree(j))
                     /\ view' = [view EXCEPT ![p] = SnapshotOf(j)]
                     /\ pc' = [pc EXCEPT ![p] = "Result"]
    /\ UNCHANGED <<shared, dval, tnow, tfinal, history>>

\* D1 only: the state, loaded after the payload, still without the lock.
SnapshotState(p) ==
    /\ pc[p] = "SnapshotState"
    /\ view' = [view EXCEPT ![p] = [@ EXCEPT !.kind = "snapshot",
                                            !.st = state[tjob[p]]]]
    /\ pc' = [pc EXCEPT ![p] = "Result"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, history>>

\* Lookup; then the snapshot (without the job mutex if terminal, as in
\* Snapshot); not DONE -> ErrNotDone with the snapshot; else res.
Result(p) ==
    LET j == tjob[p] IN
    /\ pc[p] = "Result"
    /\ (j \notin table \/ state[j] \in Terminal \/ jobOwner[j] = NoThread)
    /\ view' = IF j \notin table THEN view
               ELSE IF state[j] = "DONE"
                  THEN [view EXCEPT ![p] = [NoView EXCEPT !.kind = "result",
                                                          !.st = "DONE",
                                                          !.res = res[j]]]
                  ELSE [view EXCEPT ![p] = SnapshotOf(j)]
    /\ pc' = [pc EXCEPT ![p] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, history>>

\* Lookup; a terminal job returns its snapshot, without the job mutex
\* (job.final); otherwise, under the job mutex (register), the check again
\* and, if the job is still live, the waiter keeps the mutex for
\* WaitRegister.  The check and the taking of done are two steps of one
\* critical section, so a register that skipped the mutex would expose
\* the gap between them.
\* D4: the check unlocks, and WaitRegister is a second critical section.
WaitCheck(w) ==
    /\ pc[w] = "WaitCheck"
    /\ \E j \in Jobs :
          /\ tjob' = [tjob EXCEPT ![w] = j]
          /\ IF j \notin table
                THEN /\ pc' = [pc EXCEPT ![w] = "Done"]
                     /\ UNCHANGED <<view, jobOwner>>
                ELSE IF state[j] \in Terminal
                THEN /\ view' = [view EXCEPT ![w] = SnapshotOf(j)]
                     /\ pc' = [pc EXCEPT ![w] = "Done"]
                     /\ UNCHANGED jobOwner
                ELSE /\ jobOwner[j] = NoThread
                     /\ jobOwner' = IF Defect = "D4" THEN jobOwner
                                    ELSE [jobOwner EXCEPT ![j] = w]
                     /\ pc' = [pc EXCEPT ![w] = "WaitRegister"]
                     /\ UNCHANGED view
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, state, req, res, err,
                   createdAt, startedAt, completedAt, done, now, dval, tnow,
                   tfinal, history, tlive>>

\* waitChanLocked: make done if it is nil and take it, then unlock.
\* D4: a second critical section, which takes the mutex again and does not
\* look at the state again.
WaitRegister(w) ==
    LET j == tjob[w] IN
    /\ pc[w] = "WaitRegister"
    /\ jobOwner[j] \in {w, NoThread}
    /\ done' = IF done[j] = "nil" THEN [done EXCEPT ![j] = "open"] ELSE done
    /\ jobOwner' = [jobOwner EXCEPT ![j] = NoThread]
    /\ pc' = [pc EXCEPT ![w] = "WaitBlock"]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, state, req, res, err,
                   createdAt, startedAt, completedAt, now, tjob, dval, tnow,
                   tfinal, view, history, tlive>>

\* select { case <-done: ... }: the receive completes once done is closed.
WaitBlock(w) ==
    /\ pc[w] = "WaitBlock"
    /\ done[tjob[w]] = "closed"
    /\ pc' = [pc EXCEPT ![w] = "WaitReturn"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, view, history>>

\* select { case <-ctx.Done(): ... } (WaitDeadline): the context ends while
\* the waiter waits.  The select may take this case even if done is closed
\* too: it picks at random among ready cases.  Not a step of the waiter's
\* own, so not fair: a context need not end.
WaitCancel(w) ==
    /\ WaitDeadline
    /\ pc[w] = "WaitBlock"
    /\ expired' = expired \cup {w}
    /\ pc' = [pc EXCEPT ![w] = "WaitExpired"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, view, claimed, admitted,
                   decs, outcome, runFrom, takes, refusals, evicted, sweepOK,
                   callsOK>>

\* The snapshot the wait returns.  After the wakeup, the final snapshot,
\* read without the job mutex (the close follows the write of the final
\* snapshot), with a nil error.  After the context ended, j.snapshot():
\* without the mutex if the job is terminal, with a nil error; under it if
\* not, with ctx.Err() (a "deadline" view).  The waiter holds the job, so
\* eviction cannot lose the outcome.
WaitReturn(w) ==
    LET j == tjob[w] IN
    /\ pc[w] \in {"WaitReturn", "WaitExpired"}
    /\ (pc[w] = "WaitReturn" \/ state[j] \in Terminal \/ jobOwner[j] = NoThread)
    /\ view' = [view EXCEPT ![w] =
                   IF pc[w] = "WaitExpired" /\ state[j] \notin Terminal
                      THEN [SnapshotOf(j) EXCEPT !.kind = "deadline"]
                      ELSE SnapshotOf(j)]
    /\ pc' = [pc EXCEPT ![w] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, tfinal, history>>

-----------------------------------------------------------------------------
(* The environment                                                         *)

\* The injected clock moves on.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, createdAt, startedAt, completedAt, done, local,
                   history, tlive>>

\* Every thread has returned: stutter, so that this is not a deadlock.
Terminated ==
    /\ \A t \in Threads : pc[t] = "Done"
    /\ UNCHANGED vars

\* The steps of one thread, by role (a runner is also a terminator; a
\* misuser's Finish is a terminal call too).
Submitter(s) ==
    \/ SubmitLoad(s) \/ SubmitCAS(s) \/ SubmitStore(s) \/ SubmitIncrement(s)
    \/ SubmitInsert(s) \/ SubmitLock(s) \/ SubmitAdmit(s) \/ SubmitDone(s)
Runner(r) ==
    \/ Start(r) \/ StartClock(r) \/ StartLock(r) \/ RunnerDone(r)
    \/ TakeRequest(r) \/ Finish(r) \/ Fail(r)
Terminator(t) == Timeout(t) \/ TerminateClock(t) \/ TerminateRelease(t)
Misuser(m) ==
    \/ MisuseStart(m) \/ MisuseTake(m) \/ Finish(m) \/ TerminateClock(m)
    \/ TerminateRelease(m)
Poller(p) == Snapshot(p) \/ SnapshotState(p) \/ Result(p)
Waiter(w) == WaitCheck(w) \/ WaitRegister(w) \/ WaitBlock(w) \/ WaitReturn(w)

Next ==
    \/ \E s \in Submitters : Submitter(s)
    \/ \E r \in Runners : Runner(r)
    \/ \E t \in Runners \cup Timers : Terminator(t)
    \/ \E m \in Misusers : Misuser(m)
    \/ \E p \in Pollers : Poller(p)
    \/ \E w \in Waiters : Waiter(w) \/ WaitCancel(w)
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  Each name is also a clause of the Go checkInvariants, or   *)
(* of the tests that keep the history it needs.                            *)

Time == {NoTime} \cup (0..MaxTime)

TypeInv ==
    /\ depth \in Int
    /\ tableOwner \in Threads \cup {NoThread}
    /\ table \subseteq Jobs
    /\ lru \in Seq(Jobs)
    /\ queue \subseteq Jobs
    /\ jobOwner \in [Jobs -> Threads \cup {NoThread}]
    /\ state \in [Jobs -> States \cup {Absent}]
    /\ req \in [Jobs -> BOOLEAN]
    /\ res \in [Jobs -> BOOLEAN]
    /\ err \in [Jobs -> BOOLEAN]
    /\ createdAt \in [Jobs -> Time]
    /\ startedAt \in [Jobs -> Time]
    /\ completedAt \in [Jobs -> Time]
    /\ done \in [Jobs -> {"nil", "open", "closed"}]
    /\ now \in 0..MaxTime
    /\ tlive \in [Tenants -> 0..Cardinality(Jobs)]
    /\ tjob \in [Threads -> Jobs \cup {NoJob}]
    /\ dval \in [Threads -> Int]
    /\ tnow \in [Threads -> 0..MaxTime]
    /\ tfinal \in [Threads -> Terminal \cup {Absent}]
    /\ view \in [Threads -> Views]
    /\ refusals \subseteq Refusals
    /\ expired \subseteq Waiters
    /\ sweepOK \in BOOLEAN
    /\ callsOK \in BOOLEAN
    /\ \A j \in table : state[j] \in States /\ createdAt[j] # NoTime

\* Contract 4: a terminal state is absorbing.  outcome remembers the first
\* terminal state a job took.
TerminalAbsorbingInv ==
    \A j \in Jobs : outcome[j] # Absent => state[j] = outcome[j]

\* Contract 4: only PENDING enters RUNNING.
RunningFromPendingInv ==
    runFrom \subseteq {"PENDING"}

\* A terminator that has written job j's payload and not yet stored its
\* state: it holds the job mutex, so no reader that takes it sees the gap.
Writing(j) ==
    \E t \in Threads : pc[t] = "TerminateRelease" /\ tjob[t] = j

\* Contract 2: the payload of a job matches its state, except inside the
\* terminal transition's critical section (Writing): what a reader holding
\* the mutex sees.  res is never cleared, so Result is repeatable until
\* eviction.
PayloadConsistencyInv ==
    \A j \in table :
        ~Writing(j) =>
            /\ (state[j] \in Terminal) = (completedAt[j] # NoTime)
            /\ (state[j] = "RUNNING") => (startedAt[j] # NoTime)
            /\ (state[j] \in {"FAILED", "TIMEOUT"}) = err[j]
            /\ (state[j] = "DONE") = res[j]

\* Contract 2 (D1): every view a reader returns is one the job really had:
\* no half-done transition, a DONE result carries the result.
ConsistentReadInv ==
    \A t \in Threads :
        LET v == view[t] IN
        /\ v.kind \in {"snapshot", "deadline"} =>
              (/\ v.st \in States
               /\ (v.st \in Terminal) = v.at
               /\ (v.st \in {"FAILED", "TIMEOUT"}) = v.err)
        /\ v.kind = "result" => (v.st = "DONE" /\ v.res)

\* Contract 3 (D3): the queue bound holds.
DepthBoundInv ==
    0 <= depth /\ depth <= MaxQueue

\* The live jobs of tenant c: in the map and not terminal.
TenantLive(c) == Cardinality({j \in c \cap table : state[j] \notin Terminal})

\* Contract 3, two levels: no bounded tenant over its bound and the table
\* not over its own, stated on the jobs, apart from the counters.
TenantBoundInv ==
    /\ TenantMax > 0 => \A c \in Shares : TenantLive(c) <= TenantMax
    /\ depth <= MaxQueue

\* Each tenant's counter is its live jobs: it moves in the steps that
\* insert a job and store its terminal state.
TenantDepthInv ==
    \A c \in Tenants : tlive[c] = TenantLive(c)

\* Contracts 3 and 4 (D2): depth counts the admitted jobs not yet
\* decremented, and those are not terminal: the state is stored in the
\* step that decrements.
DepthInv ==
    LET live == {j \in admitted : decs[j] = 0} IN
    /\ depth = Cardinality(live)
    /\ \A j \in live : state[j] \notin Terminal

\* Contract 4: the decrement happens once per job, and only for a job that
\* was admitted and is terminal.
DecrementOnceInv ==
    \A j \in Jobs :
        /\ decs[j] <= 1
        /\ decs[j] = 1 => (j \in admitted /\ state[j] \in Terminal)

\* Contract 5: a thread holds a job mutex across steps only in the terminal
\* transition, between its two steps and under the table mutex, or in
\* Wait, between the check and the registration; neither asks for the
\* table mutex before it unlocks the job, so none ever asks for the table
\* mutex while it holds a job mutex.
LockOrderInv ==
    \A j \in Jobs :
        jobOwner[j] # NoThread =>
            \/ /\ pc[jobOwner[j]] = "TerminateRelease"
               /\ tableOwner = jobOwner[j]
            \/ pc[jobOwner[j]] = "WaitRegister"

\* Contract 2 (D4): a waiter blocked on a terminal job has been woken: done
\* is closed.  Likewise, a done channel is closed exactly when its job is
\* terminal.
NoLostWakeupInv ==
    /\ \A w \in Waiters :
          (pc[w] = "WaitBlock" /\ state[tjob[w]] \in Terminal)
              => done[tjob[w]] = "closed"
    /\ \A j \in Jobs :
          done[j] # "nil" => ((done[j] = "closed") = (state[j] \in Terminal))

\* Wait returns a terminal snapshot with a nil error, or, only once its
\* context has ended, a non-terminal one with ctx.Err().
WaitTerminalInv ==
    \A w \in Waiters :
        view[w].kind # "none" =>
            /\ (view[w].kind = "deadline") = (view[w].st \notin Terminal)
            /\ (view[w].kind = "deadline") => (w \in expired)

\* Retention: non-terminal jobs are never evicted.
NoEvictNonTerminalInv ==
    /\ \A j \in evicted : state[j] \in Terminal
    /\ table \cap evicted = {}

\* Retention: the LRU list holds each terminal job of the map once, in
\* completion order, from the step that stores its terminal state.
RetentionListInv ==
    /\ \A i, k \in DOMAIN lru : (i < k) =>
          (/\ lru[i] # lru[k]
           /\ completedAt[lru[i]] <= completedAt[lru[k]])
    /\ Range(lru) \subseteq table
    /\ \A j \in table : (j \in Range(lru)) = (state[j] \in Terminal)

\* Retention (ttl_early): a job is evicted before its TTL has run out only
\* by the LRU bound.  Every job on the list completed after every evicted
\* one, so while an evicted job would still be within its TTL the list
\* must hold at least MaxCompleted jobs: an eviction beyond what the bound
\* demands leaves fewer.
NoEarlyEvictionInv ==
    \A j \in evicted :
        (completedAt[j] + TTL > now) => (Len(lru) >= MaxCompleted)

\* Retention (no_lru_bound): at most MaxCompleted terminal jobs outlive an
\* eviction pass, and none that is past its TTL (history sweepOK, set by
\* every pass in SubmitInsert).
SweepBoundInv ==
    sweepOK

\* Retention (no_lru_bound): retention is bounded whatever the
\* interleaving.  Between two passes only the jobs live at the first can
\* complete, and depth bounds those.
RetentionBoundInv ==
    Len(lru) <= MaxCompleted + MaxQueue

\* TakeRequest moves the request out at most once, and a live job holds it
\* until then (outside the terminal transition, which releases it).
RequestOnceInv ==
    \A j \in Jobs :
        /\ takes[j] <= 1
        /\ (takes[j] = 1) => ~req[j]
        /\ (j \in table /\ state[j] \in {"PENDING", "RUNNING"} /\ ~Writing(j))
              => (req[j] = (takes[j] = 0))

\* The terminal transition releases the request: a terminal job holds
\* none, taken or not (keep_request).
TerminalReleasesRequestInv ==
    \A j \in table \cup evicted : (state[j] \in Terminal) => ~req[j]

\* Timestamps follow the state machine (clock_outside_lock):
\* createdAt <= startedAt <= completedAt, each where set.
TimestampOrderInv ==
    \A j \in Jobs :
        /\ (startedAt[j] # NoTime) => (createdAt[j] <= startedAt[j])
        /\ (completedAt[j] # NoTime) => (createdAt[j] <= completedAt[j])
        /\ (startedAt[j] # NoTime /\ completedAt[j] # NoTime)
              => (startedAt[j] <= completedAt[j])

\* Every Start, TakeRequest, Finish, Fail and Timeout so far returned what
\* Contract gives for the state it found: ErrNotPending only off PENDING,
\* ErrRequestTaken only on a live job whose request a TakeRequest took,
\* ErrTerminal only on a terminal job (history callsOK).
ErrorContractInv ==
    callsOK

\* Reachability witnesses, not properties: each fails exactly when what it
\* denies happens, so its must-fail configuration shows that it is
\* reachable.
\* TakeRequest is refused with ErrTerminal.
NoTakeRefusedWitness ==
    "TakeTerminal" \notin refusals

\* TakeRequest is refused with ErrRequestTaken.
NoRequestTakenWitness ==
    "TakeTaken" \notin refusals

\* Start is refused with ErrNotPending on a RUNNING job.
NoStartRunningWitness ==
    "StartRunning" \notin refusals

\* A bounded tenant's submission is refused with ErrTenantQueueFull.
NoTenantFullWitness ==
    "TenantFull" \notin refusals

\* A bounded tenant's submission, with room in its tenant, is refused with
\* ErrQueueFull.
NoTenantQueueFullWitness ==
    "TenantQueueFull" \notin refusals

\* Wait returns a non-terminal snapshot with ctx.Err().
NoWaitDeadlineWitness ==
    \A w \in Waiters : view[w].kind # "deadline"

\* A waiter is blocked on (or returning from) a job that retention has
\* evicted meanwhile.
NoWaitAcrossEvictionWitness ==
    \A w \in Waiters :
        ~(pc[w] \in {"WaitBlock", "WaitReturn"} /\ tjob[w] \in evicted)

-----------------------------------------------------------------------------
(* Properties for TLC (tla-checker does not report action properties).     *)

\* Contract 4 as an action property: every change of state is a transition
\* of the state machine.
StateMachineProp ==
    [][\A j \in Jobs :
          state'[j] # state[j] => <<state[j], state'[j]>> \in Transitions]_vars

=============================================================================
