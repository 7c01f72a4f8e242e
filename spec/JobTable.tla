------------------------------ MODULE JobTable ------------------------------
(***************************************************************************)
(* The job table of package jobtable: admission, the job state machine,    *)
(* retention (TTL, then LRU) and waiting, as concurrent threads with one   *)
(* program counter each.                                                   *)
(*                                                                         *)
(* Shared memory, as in the Go code:                                       *)
(*   depth           atomic.Int32, admitted non-terminal jobs; lock-free   *)
(*   table mutex     guards only the id map and the LRU list               *)
(*   job mutex       one per job; guards the payload (req, res, err), the  *)
(*                   timestamps and the done channel                       *)
(*   state           atomic.Int32 per job, stored only under the job       *)
(*                   mutex, loaded without a lock                          *)
(* Lock order: table before job, never the reverse.                        *)
(*                                                                         *)
(* Every action is named after the Go function (or the step of it) that    *)
(* it abstracts.  A step is one atomic effect: a lock-free atomic          *)
(* operation, or a critical section whose effects other threads can only   *)
(* see as a whole.  A table lookup whose critical section only reads the   *)
(* map is merged into the job critical section that follows it: between   *)
(* the two only the eviction of a terminal job can happen, and every job   *)
(* critical section behaves the same on an evicted terminal job.           *)
(*                                                                         *)
(* The constant Defect puts back one defect (the seed's D1-D4, or a later  *)
(* one); it switches the actions of that defect only, and the              *)
(* configuration of that defect expects the property that names it to     *)
(* fail.                                                                   *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,          \* task ids (model values)
    Submitters,    \* threads calling Submit
    Runners,       \* workers: Start, TakeRequest, then Finish/Fail/Timeout
    Timers,        \* deadline threads: one Timeout each, racing the runners
    Pollers,       \* threads calling Snapshot, then Result
    Waiters,       \* threads calling Wait
    MaxQueue,      \* Config.MaxQueue: admitted non-terminal jobs at most
    MaxCompleted,  \* Config.MaxCompleted: terminal jobs kept beyond TTL
    TTL,           \* Config.JobTTL, in clock ticks
    MaxTime,       \* bound of the abstract clock
    RunnerOutcomes,\* terminal states the runners' own calls may produce
    Defect         \* "none", or the defect to put back (see Defects)

Threads == Submitters \cup Runners \cup Timers \cup Pollers \cup Waiters

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
    \* thread-local
    pc,           \* program counter
    tjob,         \* the job a thread works on
    dval,         \* a depth value a thread loaded
    tnow,         \* a clock value a thread read (clock_outside_lock)
    view,         \* what a reader returned
    \* history, for the invariants only
    claimed,      \* ids a submitter has picked
    admitted,     \* ids whose admission took a slot of depth
    decs,         \* depth decrements per job
    outcome,      \* first terminal state per job
    runFrom,      \* states from which a job entered RUNNING
    takes,        \* successful TakeRequest calls per job
    refused,      \* jobs whose TakeRequest returned ErrTerminal
    evicted,      \* ids removed from the map
    sweepOK       \* every eviction pass so far left what retention promises

shared  == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, createdAt, startedAt, completedAt, done, now>>
local   == <<pc, tjob, dval, tnow, view>>
history == <<claimed, admitted, decs, outcome, runFrom, takes, refused,
             evicted, sweepOK>>
\* Written out flat: tla-checker does not see through a tuple of tuples.
vars    == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, createdAt, startedAt, completedAt, done, now, pc, tjob,
             dval, tnow, view, claimed, admitted, decs, outcome, runFrom,
             takes, refused, evicted, sweepOK>>

-----------------------------------------------------------------------------
(* Views: what Snapshot, Result and Wait hand back. *)

NoView == [kind |-> "none", st |-> Absent, res |-> FALSE, err |-> FALSE,
           at |-> FALSE]

\* The copy Snapshot (and Wait, on return) makes under the job mutex.
SnapshotOf(j) == [kind |-> "snapshot", st |-> state[j], res |-> FALSE,
                  err |-> err[j], at |-> completedAt[j] # NoTime]

Views == [kind : {"none", "snapshot", "result"}, st : States \cup {Absent},
          res : BOOLEAN, err : BOOLEAN, at : BOOLEAN]

-----------------------------------------------------------------------------
(* Retention: evictLocked(now), run by Submit under the table mutex. *)

\* expired(j, now, ttl): now - completedAt >= TTL.  ttl_early: one tick
\* early.
Expired(j) ==
    IF Defect = "ttl_early" THEN completedAt[j] + TTL <= now + 1
                            ELSE completedAt[j] + TTL <= now

\* Number of jobs at the front of the LRU list whose TTL has run out.  The
\* list is in completion order, so they form a prefix.  Each test reads
\* completedAt under the job's mutex, taken after the table mutex.
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
    /\ pc = [t \in Threads |->
               CASE t \in Submitters -> "SubmitLoad"
                 [] t \in Runners    -> "Start"
                 [] t \in Timers     -> "Timeout"
                 [] t \in Pollers    -> "Snapshot"
                 [] t \in Waiters    -> "WaitCheck"]
    /\ tjob = [t \in Threads |-> NoJob]
    /\ dval = [t \in Threads |-> 0]
    /\ tnow = [t \in Threads |-> 0]
    /\ view = [t \in Threads |-> NoView]
    /\ claimed = {}
    /\ admitted = {}
    /\ decs = [j \in Jobs |-> 0]
    /\ outcome = [j \in Jobs |-> Absent]
    /\ runFrom = {}
    /\ takes = [j \in Jobs |-> 0]
    /\ refused = {}
    /\ evicted = {}
    /\ sweepOK = TRUE

TableFree == tableOwner = NoThread
JobFree(j) == j \notin table \/ jobOwner[j] = NoThread

-----------------------------------------------------------------------------
(* Submit(taskID, req) *)

\* The id a Submit works on: the one it holds on a retry, else the next
\* unused one in a fixed order.  Ids are interchangeable (Config.NewID
\* draws them at random and no action or property tells them apart), so a
\* fixed order loses no behaviour up to renaming; it stands in for the
\* symmetry reduction tla-checker lacks.
NextId(s) ==
    IF tjob[s] # NoJob THEN {tjob[s]}
    ELSE IF claimed = Jobs THEN {}
    ELSE {CHOOSE j \in Jobs \ claimed : TRUE}

\* d := depth.Load(); if d >= MaxQueue -> ErrQueueFull.  A fresh call takes
\* a new id (NextId); a CAS retry keeps its id.
\* D2: the same read, unsynchronised, feeds a plain store of d+1.
SubmitLoad(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ \E j \in NextId(s) :
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
    /\ UNCHANGED <<shared, tnow, view, admitted, decs, outcome, runFrom,
                   takes, refused, evicted, sweepOK>>

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
                   tnow, view, claimed, decs, outcome, runFrom, takes,
                   refused, evicted, sweepOK>>

\* D2: the update is computed from the unsynchronised read: depth = d + 1.
SubmitStore(s) ==
    /\ pc[s] = "SubmitStore"
    /\ depth' = dval[s] + 1
    /\ admitted' = admitted \cup {tjob[s]}
    /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   tnow, view, claimed, decs, outcome, runFrom, takes,
                   refused, evicted, sweepOK>>

\* D3: the queue-full check and the increment are two separate steps.
SubmitIncrement(s) ==
    /\ pc[s] = "SubmitIncrement"
    /\ depth' = depth + 1
    /\ admitted' = admitted \cup {tjob[s]}
    /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   tnow, view, claimed, decs, outcome, runFrom, takes,
                   refused, evicted, sweepOK>>

\* Under the table mutex: evictLocked(now), insert the job with createdAt,
\* unlock.
SubmitInsert(s) ==
    /\ pc[s] = "SubmitInsert"
    /\ TableFree
    /\ \A i \in 1..ExpiredPrefix : jobOwner[lru[i]] = NoThread
    /\ LET j    == tjob[s]
           kept == EvictLocked
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
       /\ tjob' = [tjob EXCEPT ![s] = NoJob]
       /\ pc' = [pc EXCEPT ![s] = "SubmitLoad"]
    /\ UNCHANGED <<depth, tableOwner, jobOwner, res, err, startedAt,
                   completedAt, done, now, dval, tnow, view, claimed,
                   admitted, decs, outcome, runFrom, takes, refused>>

\* A submitter with no id left to submit stops.
SubmitDone(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ tjob[s] = NoJob
    /\ claimed = Jobs
    /\ pc' = [pc EXCEPT ![s] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, view, history>>

-----------------------------------------------------------------------------
(* The runner: Start(id), TakeRequest(id), then Finish, Fail or Timeout. *)

\* The runner receives an id from the work channel; Start looks it up and,
\* under the job mutex, reads the clock into startedAt and moves the job
\* from PENDING to RUNNING, and only from PENDING (a job that timed out
\* while queued stays terminal).
\* clock_outside_lock: the lookup, then the clock read (StartClock), then
\* the job's critical section (StartLock) are three steps, as in the Go
\* code before the fix.
Start(r) ==
    /\ pc[r] = "Start"
    /\ TableFree
    /\ \E j \in queue :
          /\ queue' = queue \ {j}
          /\ IF Defect = "clock_outside_lock"
                THEN /\ IF j \in table
                           THEN /\ tjob' = [tjob EXCEPT ![r] = j]
                                /\ pc' = [pc EXCEPT ![r] = "StartClock"]
                           ELSE UNCHANGED <<tjob, pc>>
                     /\ UNCHANGED <<state, startedAt, runFrom>>
                ELSE /\ JobFree(j)
                     /\ IF j \in table /\ state[j] = "PENDING"
                           THEN /\ state' = [state EXCEPT ![j] = "RUNNING"]
                                /\ startedAt' = [startedAt EXCEPT ![j] = now]
                                /\ runFrom' = runFrom \cup {state[j]}
                                /\ tjob' = [tjob EXCEPT ![r] = j]
                                /\ pc' = [pc EXCEPT ![r] = "TakeRequest"]
                           ELSE UNCHANGED <<state, startedAt, runFrom, tjob,
                                            pc>>
    /\ UNCHANGED <<depth, tableOwner, table, lru, jobOwner, req, res, err,
                   createdAt, completedAt, done, now, dval, tnow, view,
                   claimed, admitted, decs, outcome, takes, refused, evicted,
                   sweepOK>>

\* clock_outside_lock only: now := t.cfg.Now(), no lock held.
StartClock(r) ==
    /\ pc[r] = "StartClock"
    /\ tnow' = [tnow EXCEPT ![r] = now]
    /\ pc' = [pc EXCEPT ![r] = "StartLock"]
    /\ UNCHANGED <<shared, tjob, dval, view, history>>

\* clock_outside_lock only: under the job mutex, PENDING -> RUNNING with the
\* startedAt read before the lock.
StartLock(r) ==
    LET j == tjob[r] IN
    /\ pc[r] = "StartLock"
    /\ JobFree(j)
    /\ IF j \in table /\ state[j] = "PENDING"
          THEN /\ state' = [state EXCEPT ![j] = "RUNNING"]
               /\ startedAt' = [startedAt EXCEPT ![j] = tnow[r]]
               /\ runFrom' = runFrom \cup {state[j]}
               /\ pc' = [pc EXCEPT ![r] = "TakeRequest"]
               /\ UNCHANGED tjob
          ELSE /\ pc' = [pc EXCEPT ![r] = "Start"]
               /\ tjob' = [tjob EXCEPT ![r] = NoJob]
               /\ UNCHANGED <<state, startedAt, runFrom>>
    /\ tnow' = [tnow EXCEPT ![r] = 0]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, req, res,
                   err, createdAt, completedAt, done, now, dval, view,
                   claimed, admitted, decs, outcome, takes, refused, evicted,
                   sweepOK>>

\* Once every submitter has stopped and the channel is drained, the
\* runner's loop ends.
RunnerDone(r) ==
    /\ pc[r] = "Start"
    /\ queue = {}
    /\ \A s \in Submitters : pc[s] = "Done"
    /\ pc' = [pc EXCEPT ![r] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, view, history>>

\* Under the job mutex: a terminal job -> ErrTerminal (its request was
\* released by the terminal transition); a request already moved out ->
\* ErrRequestTaken; otherwise move it out.
TakeRequest(r) ==
    LET j == tjob[r] IN
    /\ pc[r] = "TakeRequest"
    /\ TableFree
    /\ JobFree(j)
    /\ IF j \in table /\ state[j] \in Terminal
          THEN /\ refused' = refused \cup {j}
               /\ UNCHANGED <<req, takes>>
          ELSE IF j \in table /\ req[j]
          THEN /\ req' = [req EXCEPT ![j] = FALSE]
               /\ takes' = [takes EXCEPT ![j] = @ + 1]
               /\ UNCHANGED refused
          ELSE UNCHANGED <<req, takes, refused>>
    /\ pc' = [pc EXCEPT ![r] = "Terminate"]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, res,
                   err, createdAt, startedAt, completedAt, done, now, tjob,
                   dval, tnow, view, claimed, admitted, decs, outcome,
                   runFrom, evicted, sweepOK>>

\* Where a thread goes once its terminal call returns.
AfterTerminate(t) == IF t \in Runners THEN "Start" ELSE "Done"

\* The terminal transition (Finish, Fail and Timeout share it), first step,
\* taken holding the table mutex: look the id up, lock the job; a terminal
\* job is left alone (ErrTerminal) and both mutexes are released;
\* otherwise read the clock (at) into completedAt, write the payload,
\* release the request (keep_request: keep it) and store the terminal
\* state, keeping both mutexes for the second step.
TerminatePublish(t, j, final, at) ==
    /\ JobFree(j)
    /\ IF j \notin table \/ state[j] \in Terminal
          THEN /\ tableOwner' = NoThread
               /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
               /\ tjob' = [tjob EXCEPT ![t] = NoJob]
               /\ UNCHANGED <<jobOwner, state, req, res, err, completedAt,
                              outcome>>
          ELSE /\ tableOwner' = t
               /\ jobOwner' = [jobOwner EXCEPT ![j] = t]
               /\ res' = [res EXCEPT ![j] = (final = "DONE")]
               /\ err' = [err EXCEPT ![j] = (final # "DONE")]
               /\ completedAt' = [completedAt EXCEPT ![j] = at]
               /\ req' = IF Defect = "keep_request" THEN req
                                                   ELSE [req EXCEPT ![j] = FALSE]
               /\ state' = [state EXCEPT ![j] = final]
               /\ outcome' = [outcome EXCEPT ![j] = final]
               /\ tjob' = [tjob EXCEPT ![t] = j]
               /\ pc' = [pc EXCEPT ![t] = "TerminateRelease"]
    /\ tnow' = [tnow EXCEPT ![t] = 0]
    /\ UNCHANGED <<depth, table, lru, queue, createdAt, startedAt, done, now,
                   dval, view, claimed, admitted, decs, runFrom, takes,
                   refused, evicted, sweepOK>>

\* A thread's terminal call on its job is ready: the whole first step, the
\* clock read under both mutexes; or, after TerminateClock
\* (clock_outside_lock), the job's critical section with the clock value
\* read before it.
TerminateReady(t) ==
    \/ pc[t] = "Terminate" /\ Defect # "clock_outside_lock" /\ TableFree
    \/ pc[t] = "TerminateLock"
TerminateAt(t) == IF pc[t] = "TerminateLock" THEN tnow[t] ELSE now

Finish(r) ==
    /\ "DONE" \in RunnerOutcomes
    /\ TerminateReady(r)
    /\ TerminatePublish(r, tjob[r], "DONE", TerminateAt(r))
Fail(r) ==
    /\ "FAILED" \in RunnerOutcomes
    /\ TerminateReady(r)
    /\ TerminatePublish(r, tjob[r], "FAILED", TerminateAt(r))
\* A runner's own deadline, or a timer's deadline on any id.
Timeout(t) ==
    \/ /\ (t \in Timers \/ "TIMEOUT" \in RunnerOutcomes)
       /\ TerminateReady(t)
       /\ TerminatePublish(t, tjob[t], "TIMEOUT", TerminateAt(t))
    \/ /\ pc[t] = "Timeout"
       /\ Defect # "clock_outside_lock"
       /\ TableFree
       /\ \E j \in Jobs : TerminatePublish(t, j, "TIMEOUT", now)

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
                   createdAt, startedAt, completedAt, done, now, dval, view,
                   history>>

\* Second step of terminate: depth.Add(-1), close done if a waiter made it
\* (no_wakeup: never), unlock the job, push the job onto the LRU list
\* (retainLocked), unlock the table.
TerminateRelease(t) ==
    LET j == tjob[t] IN
    /\ pc[t] = "TerminateRelease"
    /\ depth' = depth - 1
    /\ decs' = [decs EXCEPT ![j] = @ + 1]
    /\ done' = IF done[j] = "open" /\ Defect # "no_wakeup"
                  THEN [done EXCEPT ![j] = "closed"] ELSE done
    /\ jobOwner' = [jobOwner EXCEPT ![j] = NoThread]
    /\ lru' = Append(lru, j)
    /\ tableOwner' = NoThread
    /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
    /\ tjob' = [tjob EXCEPT ![t] = NoJob]
    /\ UNCHANGED <<table, queue, state, req, res, err, createdAt, startedAt,
                   completedAt, now, dval, tnow, view, claimed, admitted,
                   outcome, runFrom, takes, refused, evicted, sweepOK>>

-----------------------------------------------------------------------------
(* Readers: Snapshot(id), Result(id), Wait(ctx, id). *)

\* Lookup, then copy state, err and timestamps under the job mutex.
\* D1: the copy is made without the job mutex, the payload first and the
\* state after it.
Snapshot(p) ==
    /\ pc[p] = "Snapshot"
    /\ TableFree
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
                ELSE /\ JobFree(j)
                     /\ view' = [view EXCEPT ![p] = SnapshotOf(j)]
                     /\ pc' = [pc EXCEPT ![p] = "Result"]
    /\ UNCHANGED <<shared, dval, tnow, history>>

\* D1 only: the state, loaded after the payload, still without the lock.
SnapshotState(p) ==
    /\ pc[p] = "SnapshotState"
    /\ view' = [view EXCEPT ![p] = [@ EXCEPT !.kind = "snapshot",
                                            !.st = state[tjob[p]]]]
    /\ pc' = [pc EXCEPT ![p] = "Result"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, history>>

\* Lookup; state.Load() is not DONE -> ErrNotDone; else res under the job
\* mutex.  The state is absorbing, so the load and the read are one step.
Result(p) ==
    LET j == tjob[p] IN
    /\ pc[p] = "Result"
    /\ TableFree
    /\ JobFree(j)
    /\ view' = IF j \in table /\ state[j] = "DONE"
                  THEN [view EXCEPT ![p] = [NoView EXCEPT !.kind = "result",
                                                          !.st = "DONE",
                                                          !.res = res[j]]]
                  ELSE view
    /\ pc' = [pc EXCEPT ![p] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, history>>

\* Lookup, then under the job mutex (register): a terminal job returns its
\* snapshot; otherwise make done if it is nil and take it.  Unlocking ends
\* the step: checking and blocking are two steps.
\* D4: the check and the taking of done are two critical sections.
WaitCheck(w) ==
    /\ pc[w] = "WaitCheck"
    /\ TableFree
    /\ \E j \in Jobs :
          /\ JobFree(j)
          /\ tjob' = [tjob EXCEPT ![w] = j]
          /\ IF j \notin table
                THEN /\ pc' = [pc EXCEPT ![w] = "Done"]
                     /\ UNCHANGED <<view, done>>
                ELSE IF state[j] \in Terminal
                THEN /\ view' = [view EXCEPT ![w] = SnapshotOf(j)]
                     /\ pc' = [pc EXCEPT ![w] = "Done"]
                     /\ UNCHANGED done
                ELSE IF Defect = "D4"
                THEN /\ pc' = [pc EXCEPT ![w] = "WaitRegister"]
                     /\ UNCHANGED <<view, done>>
                ELSE /\ done' = IF done[j] = "nil"
                                   THEN [done EXCEPT ![j] = "open"] ELSE done
                     /\ pc' = [pc EXCEPT ![w] = "WaitBlock"]
                     /\ UNCHANGED view
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, createdAt, startedAt, completedAt, now, dval,
                   tnow, history>>

\* D4 only: a second critical section takes done (waitChanLocked) without
\* looking at the state again.
WaitRegister(w) ==
    LET j == tjob[w] IN
    /\ pc[w] = "WaitRegister"
    /\ jobOwner[j] = NoThread
    /\ done' = IF done[j] = "nil" THEN [done EXCEPT ![j] = "open"] ELSE done
    /\ pc' = [pc EXCEPT ![w] = "WaitBlock"]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, createdAt, startedAt, completedAt, now, tjob,
                   dval, tnow, view, history>>

\* select { case <-done: ... }: the receive completes once done is closed.
\* (ctx.Done() only ends the wait early and changes nothing in the table.)
WaitBlock(w) ==
    /\ pc[w] = "WaitBlock"
    /\ done[tjob[w]] = "closed"
    /\ pc' = [pc EXCEPT ![w] = "WaitReturn"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, view, history>>

\* The final snapshot under the job mutex.  The waiter holds the job, so
\* eviction cannot lose the outcome.
WaitReturn(w) ==
    LET j == tjob[w] IN
    /\ pc[w] = "WaitReturn"
    /\ jobOwner[j] = NoThread
    /\ view' = [view EXCEPT ![w] = SnapshotOf(j)]
    /\ pc' = [pc EXCEPT ![w] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, tnow, history>>

-----------------------------------------------------------------------------
(* The environment *)

\* The injected clock moves on.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, createdAt, startedAt, completedAt, done, local,
                   history>>

\* Every thread has returned: stutter, so that this is not a deadlock.
Terminated ==
    /\ \A t \in Threads : pc[t] = "Done"
    /\ UNCHANGED vars

\* The steps of one thread, by role (a runner is also a terminator).
Submitter(s) ==
    \/ SubmitLoad(s) \/ SubmitCAS(s) \/ SubmitStore(s) \/ SubmitIncrement(s)
    \/ SubmitInsert(s) \/ SubmitDone(s)
Runner(r) ==
    \/ Start(r) \/ StartClock(r) \/ StartLock(r) \/ RunnerDone(r)
    \/ TakeRequest(r) \/ Finish(r) \/ Fail(r)
Terminator(t) == Timeout(t) \/ TerminateClock(t) \/ TerminateRelease(t)
Poller(p) == Snapshot(p) \/ SnapshotState(p) \/ Result(p)
Waiter(w) == WaitCheck(w) \/ WaitRegister(w) \/ WaitBlock(w) \/ WaitReturn(w)

Next ==
    \/ \E s \in Submitters : Submitter(s)
    \/ \E r \in Runners : Runner(r)
    \/ \E t \in Runners \cup Timers : Terminator(t)
    \/ \E p \in Pollers : Poller(p)
    \/ \E w \in Waiters : Waiter(w)
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  Each name is also a clause of the Go checkInvariants, or   *)
(* of the tests that keep the history it needs.                            *)

Terminators == Runners \cup Timers

Time == {NoTime} \cup (0..MaxTime)

\* A terminator that has published job j's terminal state and not yet
\* released the job (depth not yet decremented, job not yet on the LRU).
Releasing(j) ==
    {t \in Terminators : pc[t] = "TerminateRelease" /\ tjob[t] = j}

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
    /\ tjob \in [Threads -> Jobs \cup {NoJob}]
    /\ dval \in [Threads -> Int]
    /\ tnow \in [Threads -> 0..MaxTime]
    /\ view \in [Threads -> Views]
    /\ refused \subseteq Jobs
    /\ sweepOK \in BOOLEAN
    /\ \A j \in table : state[j] \in States /\ createdAt[j] # NoTime

\* Contract 4: a terminal state is absorbing.  outcome remembers the first
\* terminal state a job took.
TerminalAbsorbingInv ==
    \A j \in Jobs : outcome[j] # Absent => state[j] = outcome[j]

\* Contract 4: only PENDING enters RUNNING.
RunningFromPendingInv ==
    runFrom \subseteq {"PENDING"}

\* Contract 2: the payload a job holds matches its state.  res is never
\* cleared, so Result is repeatable until eviction.
PayloadConsistencyInv ==
    \A j \in table :
        /\ (state[j] \in Terminal) = (completedAt[j] # NoTime)
        /\ (state[j] = "RUNNING") => (startedAt[j] # NoTime)
        /\ (state[j] \in {"FAILED", "TIMEOUT"}) = err[j]
        /\ (state[j] = "DONE") = res[j]

\* Contract 2 (D1): every view a reader returns is one the job really had:
\* no half-done transition, a DONE result carries the result.
ConsistentReadInv ==
    \A t \in Threads :
        LET v == view[t] IN
        /\ v.kind = "snapshot" =>
              (/\ v.st \in States
               /\ (v.st \in Terminal) = v.at
               /\ (v.st \in {"FAILED", "TIMEOUT"}) = v.err)
        /\ v.kind = "result" => (v.st = "DONE" /\ v.res)

\* Contract 3 (D3): the queue bound holds.
DepthBoundInv ==
    0 <= depth /\ depth <= MaxQueue

\* Contracts 3 and 4 (D2): depth counts the admitted jobs not yet
\* decremented; those are the non-terminal jobs, the jobs of submitters
\* between CAS and insert, and the jobs of terminators between their two
\* steps.
DepthInv ==
    LET live == {j \in admitted : decs[j] = 0} IN
    /\ depth = Cardinality(live)
    /\ \A j \in live : state[j] \notin Terminal \/ Releasing(j) # {}

\* Contract 4: the decrement happens once per job, and only for a job that
\* was admitted and is terminal.
DecrementOnceInv ==
    \A j \in Jobs :
        /\ decs[j] <= 1
        /\ decs[j] = 1 => (j \in admitted /\ state[j] \in Terminal)

\* Contract 5: no thread asks for the table mutex while it holds a job
\* mutex, and a job mutex is held across steps only under the table mutex.
LockOrderInv ==
    /\ \A t \in Threads :
          pc[t] \in {"SubmitInsert", "Start", "TakeRequest", "Terminate",
                     "Timeout", "Snapshot", "Result", "WaitCheck"}
             => \A j \in Jobs : jobOwner[j] # t
    /\ \A j \in Jobs : jobOwner[j] # NoThread => tableOwner = jobOwner[j]

\* Contract 2 (D4): a waiter blocked on a terminal job has a wakeup on its
\* way: done is closed, or the terminator has not yet left its critical
\* section.  Likewise, a done channel is closed exactly when its job is
\* terminal and released.
NoLostWakeupInv ==
    /\ \A w \in Waiters :
          (pc[w] = "WaitBlock" /\ state[tjob[w]] \in Terminal)
              => (done[tjob[w]] = "closed" \/ Releasing(tjob[w]) # {})
    /\ \A j \in Jobs :
          done[j] # "nil" =>
              ((done[j] = "closed")
                  = (state[j] \in Terminal /\ Releasing(j) = {}))

\* Wait returns only a terminal snapshot.
WaitTerminalInv ==
    \A w \in Waiters :
        view[w].kind # "none" => view[w].st \in Terminal

\* Retention: non-terminal jobs are never evicted.
NoEvictNonTerminalInv ==
    /\ \A j \in evicted : state[j] \in Terminal
    /\ table \cap evicted = {}

\* Retention: the LRU list holds each terminal job of the map once, in
\* completion order, as soon as its terminator has released it.
RetentionListInv ==
    /\ \A i, k \in DOMAIN lru : (i < k) =>
          (/\ lru[i] # lru[k]
           /\ completedAt[lru[i]] <= completedAt[lru[k]])
    /\ Range(lru) \subseteq table
    /\ \A j \in table :
          (j \in Range(lru)) = (state[j] \in Terminal /\ Releasing(j) = {})

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

\* TakeRequest moves the request out at most once, and only of a job that
\* is not terminal.
RequestOnceInv ==
    \A j \in Jobs :
        /\ takes[j] <= 1
        /\ (takes[j] = 1) => ~req[j]
        /\ (j \in table /\ state[j] \in {"PENDING", "RUNNING"})
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

\* Reachability witnesses, not properties: each fails exactly when what it
\* denies happens, so its must-fail configuration shows that it is
\* reachable.
\* TakeRequest is refused with ErrTerminal.
NoTakeRefusedWitness ==
    refused = {}

\* A waiter is blocked on (or returning from) a job that retention has
\* evicted meanwhile.
NoWaitAcrossEvictionWitness ==
    \A w \in Waiters :
        ~(pc[w] \in {"WaitBlock", "WaitReturn"} /\ tjob[w] \in evicted)

-----------------------------------------------------------------------------
(* Properties for TLC (tla-checker does not report action properties). *)

\* Contract 4 as an action property: every change of state is a transition
\* of the state machine.
StateMachineProp ==
    [][\A j \in Jobs :
          state'[j] # state[j] => <<state[j], state'[j]>> \in Transitions]_vars

=============================================================================
