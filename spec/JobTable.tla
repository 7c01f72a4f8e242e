------------------------------ MODULE JobTable ------------------------------
(***************************************************************************)
(* The job table of package jobtable: admission, the job state machine,    *)
(* retention (TTL, then LRU) and waiting, as concurrent threads with one   *)
(* program counter each.                                                   *)
(*                                                                         *)
(* Shared memory, as in the Go code:                                       *)
(*   depth           atomic.Int32, admitted non-terminal jobs; lock-free   *)
(*   table mutex     guards only the id map and the LRU list               *)
(*   job mutex       one per job; guards the payload (req, res, err),      *)
(*                   completedAt and the done channel                      *)
(*   state           atomic.Int32 per job, stored only under the job       *)
(*                   mutex, loaded without a lock                          *)
(* Lock order: table before job, never the reverse.                        *)
(*                                                                         *)
(* Every action is named after the Go function (or the step of it) that    *)
(* it abstracts.  A step is one atomic effect: a lock-free atomic          *)
(* operation, or a critical section whose effects other threads can only   *)
(* see as a whole.  A table lookup whose critical section only reads the   *)
(* map is merged into the job critical section that follows it: between    *)
(* the two only the eviction of a terminal job can happen, and every job   *)
(* critical section behaves the same on an evicted terminal job.           *)
(*                                                                         *)
(* The constant Defect puts back one defect of the old design (D1-D4); it  *)
(* switches exactly one action, and the configuration of that defect       *)
(* expects the invariant that names it to fail.                            *)
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
    TTL,           \* Config.TTL, in clock ticks
    MaxTime,       \* bound of the abstract clock
    Defect         \* "none", or the seed defect to put back: "D1".."D4"

Threads == Submitters \cup Runners \cup Timers \cup Pollers \cup Waiters

ASSUME
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat
    /\ TTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ Defect \in {"none", "D1", "D2", "D3", "D4"}

NoThread == "nobody"   \* owner of a free mutex
NoJob    == "nojob"    \* a thread's job before it picks one
NoTime   == -1         \* completedAt of a job that has not completed

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
    req,          \* job.req is still held (TakeRequest not yet called)
    res,          \* job.res is set
    err,          \* job.err is set
    completedAt,  \* job.completedAt
    done,         \* job.done: "nil", "open" or "closed"
    now,          \* the injected clock
    \* thread-local
    pc,           \* program counter
    tjob,         \* the job a thread works on
    dval,         \* a depth value a thread loaded
    view,         \* what a reader returned
    \* history, for the invariants only
    claimed,      \* ids a submitter has picked
    admitted,     \* ids whose admission took a slot of depth
    decs,         \* depth decrements per job
    outcome,      \* first terminal state per job
    runFrom,      \* states from which a job entered RUNNING
    takes,        \* successful TakeRequest calls per job
    evicted       \* ids removed from the map

shared  == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, completedAt, done, now>>
local   == <<pc, tjob, dval, view>>
history == <<claimed, admitted, decs, outcome, runFrom, takes, evicted>>
\* Written out flat: tla-checker does not see through a tuple of tuples.
vars    == <<depth, tableOwner, table, lru, queue, jobOwner, state, req, res,
             err, completedAt, done, now, pc, tjob, dval, view, claimed,
             admitted, decs, outcome, runFrom, takes, evicted>>

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

\* Number of jobs at the front of the LRU list whose TTL has run out.  The
\* list is in completion order, so they form a prefix.  Each test reads
\* completedAt under the job's mutex, taken after the table mutex.
ExpiredPrefix ==
    CHOOSE n \in 0..Len(lru) :
        /\ \A i \in 1..n : completedAt[lru[i]] + TTL <= now
        /\ n < Len(lru) => completedAt[lru[n + 1]] + TTL > now

\* The LRU list that evictLocked(now) leaves: TTL first, then the oldest
\* beyond MaxCompleted.
EvictLocked ==
    LET afterTTL == SubSeq(lru, ExpiredPrefix + 1, Len(lru))
        extra    == IF Len(afterTTL) > MaxCompleted
                        THEN Len(afterTTL) - MaxCompleted ELSE 0
    IN  SubSeq(afterTTL, extra + 1, Len(afterTTL))

Range(s) == {s[i] : i \in DOMAIN s}

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
    /\ view = [t \in Threads |-> NoView]
    /\ claimed = {}
    /\ admitted = {}
    /\ decs = [j \in Jobs |-> 0]
    /\ outcome = [j \in Jobs |-> Absent]
    /\ runFrom = {}
    /\ takes = [j \in Jobs |-> 0]
    /\ evicted = {}

TableFree == tableOwner = NoThread
JobFree(j) == j \notin table \/ jobOwner[j] = NoThread

-----------------------------------------------------------------------------
(* Submit(taskID, req) *)

\* d := depth.Load(); if d >= MaxQueue -> ErrQueueFull.  A fresh call picks
\* a new id; a CAS retry keeps its id.
SubmitLoad(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ \E j \in IF tjob[s] = NoJob THEN Jobs \ claimed ELSE {tjob[s]} :
          /\ claimed' = claimed \cup {j}
          /\ IF depth >= MaxQueue
                THEN /\ tjob' = [tjob EXCEPT ![s] = NoJob]
                     /\ UNCHANGED <<pc, dval>>
                ELSE /\ tjob' = [tjob EXCEPT ![s] = j]
                     /\ dval' = [dval EXCEPT ![s] = depth]
                     /\ pc' = [pc EXCEPT ![s] = IF Defect = "D3"
                                                   THEN "SubmitIncrement"
                                                   ELSE "SubmitCAS"]
    /\ UNCHANGED <<shared, view, admitted, decs, outcome, runFrom,
                   takes, evicted>>

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
                   err, completedAt, done, now, tjob, view,
                   claimed, decs, outcome, runFrom, takes, evicted>>

\* D3: the queue-full check and the increment are two separate steps.
SubmitIncrement(s) ==
    /\ pc[s] = "SubmitIncrement"
    /\ depth' = depth + 1
    /\ admitted' = admitted \cup {tjob[s]}
    /\ pc' = [pc EXCEPT ![s] = "SubmitInsert"]
    /\ dval' = [dval EXCEPT ![s] = 0]
    /\ UNCHANGED <<tableOwner, table, lru, queue, jobOwner, state, req, res,
                   err, completedAt, done, now, tjob, view,
                   claimed, decs, outcome, runFrom, takes, evicted>>

\* Under the table mutex: evictLocked(now), insert the job, unlock.
SubmitInsert(s) ==
    LET j    == tjob[s]
        kept == EvictLocked
        gone == Range(lru) \ Range(kept)
    IN
    /\ pc[s] = "SubmitInsert"
    /\ TableFree
    /\ \A i \in 1..ExpiredPrefix : jobOwner[lru[i]] = NoThread
    /\ lru' = kept
    /\ table' = (table \ gone) \cup {j}
    /\ evicted' = evicted \cup gone
    /\ queue' = queue \cup {j}
    /\ state' = [state EXCEPT ![j] = "PENDING"]
    /\ req' = [req EXCEPT ![j] = TRUE]
    /\ tjob' = [tjob EXCEPT ![s] = NoJob]
    /\ pc' = [pc EXCEPT ![s] = "SubmitLoad"]
    /\ UNCHANGED <<depth, tableOwner, jobOwner, res, err, completedAt, done,
                   now, dval, view, claimed, admitted, decs, outcome,
                   runFrom, takes>>

\* A submitter with no id left to submit stops.
SubmitDone(s) ==
    /\ pc[s] = "SubmitLoad"
    /\ tjob[s] = NoJob
    /\ claimed = Jobs
    /\ pc' = [pc EXCEPT ![s] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, view, history>>

-----------------------------------------------------------------------------
(* The runner: Start(id), TakeRequest(id), then Finish, Fail or Timeout. *)

\* The runner receives an id from the work channel; Start looks it up and,
\* under the job mutex, moves it from PENDING to RUNNING, and only from
\* PENDING (a job that timed out while queued stays terminal).
Start(r) ==
    /\ pc[r] = "Start"
    /\ TableFree
    /\ \E j \in queue :
          /\ JobFree(j)
          /\ queue' = queue \ {j}
          /\ IF j \in table /\ state[j] = "PENDING"
                THEN /\ state' = [state EXCEPT ![j] = "RUNNING"]
                     /\ runFrom' = runFrom \cup {state[j]}
                     /\ tjob' = [tjob EXCEPT ![r] = j]
                     /\ pc' = [pc EXCEPT ![r] = "TakeRequest"]
                ELSE UNCHANGED <<state, runFrom, tjob, pc>>
    /\ UNCHANGED <<depth, tableOwner, table, lru, jobOwner, req, res, err,
                   completedAt, done, now, dval, view, claimed,
                   admitted, decs, outcome, takes, evicted>>

\* Once every submitter has stopped and the channel is drained, the
\* runner's loop ends.
RunnerDone(r) ==
    /\ pc[r] = "Start"
    /\ queue = {}
    /\ \A s \in Submitters : pc[s] = "Done"
    /\ pc' = [pc EXCEPT ![r] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, view, history>>

\* Under the job mutex: move the request out once; a second call gets
\* ErrRequestTaken.
TakeRequest(r) ==
    LET j == tjob[r] IN
    /\ pc[r] = "TakeRequest"
    /\ TableFree
    /\ JobFree(j)
    /\ IF j \in table /\ req[j]
          THEN /\ req' = [req EXCEPT ![j] = FALSE]
               /\ takes' = [takes EXCEPT ![j] = @ + 1]
          ELSE UNCHANGED <<req, takes>>
    /\ pc' = [pc EXCEPT ![r] = "Terminate"]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, res,
                   err, completedAt, done, now, tjob, dval, view,
                   claimed, admitted, decs, outcome, runFrom, evicted>>

\* Where a thread goes once its terminal call returns.
AfterTerminate(t) == IF t \in Runners THEN "Start" ELSE "Done"

\* First step of terminate (Finish, Fail and Timeout share it): lock the
\* table, look the id up, lock the job; a terminal job is left alone
\* (ErrTerminal); otherwise write the payload and completedAt and store the
\* terminal state, keeping both mutexes for the second step.
TerminatePublish(t, j, final) ==
    /\ TableFree
    /\ JobFree(j)
    /\ IF j \notin table \/ state[j] \in Terminal
          THEN /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
               /\ tjob' = [tjob EXCEPT ![t] = NoJob]
               /\ UNCHANGED <<tableOwner, jobOwner, state, res, err,
                              completedAt, outcome>>
          ELSE /\ tableOwner' = t
               /\ jobOwner' = [jobOwner EXCEPT ![j] = t]
               /\ res' = [res EXCEPT ![j] = (final = "DONE")]
               /\ err' = [err EXCEPT ![j] = (final # "DONE")]
               /\ completedAt' = [completedAt EXCEPT ![j] = now]
               /\ state' = [state EXCEPT ![j] = final]
               /\ outcome' = [outcome EXCEPT ![j] = final]
               /\ tjob' = [tjob EXCEPT ![t] = j]
               /\ pc' = [pc EXCEPT ![t] = IF Defect = "D2"
                                            THEN "TerminateLoadDepth"
                                            ELSE "TerminateRelease"]
    /\ UNCHANGED <<depth, table, lru, queue, req, done, now, dval, view,
                   claimed, admitted, decs, runFrom, takes, evicted>>

Finish(r)  == pc[r] = "Terminate" /\ TerminatePublish(r, tjob[r], "DONE")
Fail(r)    == pc[r] = "Terminate" /\ TerminatePublish(r, tjob[r], "FAILED")
\* A runner's own deadline, or a timer's deadline on any id.
Timeout(t) ==
    \/ pc[t] = "Terminate" /\ TerminatePublish(t, tjob[t], "TIMEOUT")
    \/ pc[t] = "Timeout" /\ \E j \in Jobs : TerminatePublish(t, j, "TIMEOUT")

\* D2: the decrement is computed from a separate, unsynchronised load.
TerminateLoadDepth(t) ==
    /\ pc[t] = "TerminateLoadDepth"
    /\ dval' = [dval EXCEPT ![t] = depth]
    /\ pc' = [pc EXCEPT ![t] = "TerminateRelease"]
    /\ UNCHANGED <<shared, tjob, view, history>>

\* Second step of terminate: depth.Add(-1), close done if a waiter made it,
\* unlock the job, push the job onto the LRU list (retainLocked), unlock the
\* table.
TerminateRelease(t) ==
    LET j == tjob[t] IN
    /\ pc[t] = "TerminateRelease"
    /\ depth' = IF Defect = "D2" THEN dval[t] - 1 ELSE depth - 1
    /\ decs' = [decs EXCEPT ![j] = @ + 1]
    /\ done' = IF done[j] = "open" THEN [done EXCEPT ![j] = "closed"]
                                    ELSE done
    /\ jobOwner' = [jobOwner EXCEPT ![j] = NoThread]
    /\ lru' = Append(lru, j)
    /\ tableOwner' = NoThread
    /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
    /\ tjob' = [tjob EXCEPT ![t] = NoJob]
    /\ dval' = [dval EXCEPT ![t] = 0]
    /\ UNCHANGED <<table, queue, state, req, res, err, completedAt, now,
                   view, claimed, admitted, outcome, runFrom,
                   takes, evicted>>

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
    /\ UNCHANGED <<shared, dval, history>>

\* D1 only: the state, loaded after the payload, still without the lock.
SnapshotState(p) ==
    /\ pc[p] = "SnapshotState"
    /\ view' = [view EXCEPT ![p] = [@ EXCEPT !.kind = "snapshot",
                                            !.st = state[tjob[p]]]]
    /\ pc' = [pc EXCEPT ![p] = "Result"]
    /\ UNCHANGED <<shared, tjob, dval, history>>

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
    /\ UNCHANGED <<shared, tjob, dval, history>>

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
                   res, err, completedAt, now, dval, history>>

\* D4 only: a second critical section takes done (waitChanLocked) without
\* looking at the state again.
WaitRegister(w) ==
    LET j == tjob[w] IN
    /\ pc[w] = "WaitRegister"
    /\ jobOwner[j] = NoThread
    /\ done' = IF done[j] = "nil" THEN [done EXCEPT ![j] = "open"] ELSE done
    /\ pc' = [pc EXCEPT ![w] = "WaitBlock"]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, completedAt, now, tjob, dval, view, history>>

\* select { case <-done: ... }: the receive completes once done is closed.
\* (ctx.Done() only ends the wait early and changes nothing in the table.)
WaitBlock(w) ==
    /\ pc[w] = "WaitBlock"
    /\ done[tjob[w]] = "closed"
    /\ pc' = [pc EXCEPT ![w] = "WaitReturn"]
    /\ UNCHANGED <<shared, tjob, dval, view, history>>

\* The final snapshot under the job mutex.  The waiter holds the job, so
\* eviction cannot lose the outcome.
WaitReturn(w) ==
    LET j == tjob[w] IN
    /\ pc[w] = "WaitReturn"
    /\ jobOwner[j] = NoThread
    /\ view' = [view EXCEPT ![w] = SnapshotOf(j)]
    /\ pc' = [pc EXCEPT ![w] = "Done"]
    /\ UNCHANGED <<shared, tjob, dval, history>>

-----------------------------------------------------------------------------
(* The environment *)

\* The injected clock moves on.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, completedAt, done, local, history>>

\* Every thread has returned: stutter, so that this is not a deadlock.
Terminated ==
    /\ \A t \in Threads : pc[t] = "Done"
    /\ UNCHANGED vars

Next ==
    \/ \E s \in Submitters :
          SubmitLoad(s) \/ SubmitCAS(s) \/ SubmitIncrement(s)
            \/ SubmitInsert(s) \/ SubmitDone(s)
    \/ \E r \in Runners :
          Start(r) \/ RunnerDone(r) \/ TakeRequest(r) \/ Finish(r) \/ Fail(r)
    \/ \E t \in Runners \cup Timers :
          Timeout(t) \/ TerminateLoadDepth(t) \/ TerminateRelease(t)
    \/ \E p \in Pollers : Snapshot(p) \/ SnapshotState(p) \/ Result(p)
    \/ \E w \in Waiters :
          WaitCheck(w) \/ WaitRegister(w) \/ WaitBlock(w) \/ WaitReturn(w)
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  Each name is also a clause of the Go checkInvariants. *)

Terminators == Runners \cup Timers

\* A terminator that has published job j's terminal state and not yet
\* released the job (depth not yet decremented, job not yet on the LRU).
Releasing(j) ==
    {t \in Terminators : pc[t] \in {"TerminateLoadDepth", "TerminateRelease"}
                          /\ tjob[t] = j}

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
    /\ completedAt \in [Jobs -> {NoTime} \cup (0..MaxTime)]
    /\ done \in [Jobs -> {"nil", "open", "closed"}]
    /\ now \in 0..MaxTime
    /\ tjob \in [Threads -> Jobs \cup {NoJob}]
    /\ dval \in [Threads -> Int]
    /\ view \in [Threads -> Views]
    /\ \A j \in table : state[j] \in States

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
    /\ \A i, k \in DOMAIN lru : i < k =>
          (/\ lru[i] # lru[k]
           /\ completedAt[lru[i]] <= completedAt[lru[k]])
    /\ Range(lru) \subseteq table
    /\ \A j \in table :
          (j \in Range(lru)) = (state[j] \in Terminal /\ Releasing(j) = {})

\* TakeRequest moves the request out at most once.
RequestOnceInv ==
    \A j \in Jobs :
        /\ takes[j] <= 1
        /\ (takes[j] = 1) = (j \in table \cup evicted /\ ~req[j])

-----------------------------------------------------------------------------
(* Properties for TLC (tla-checker does not report action properties). *)

\* Contract 4 as an action property: every change of state is a transition
\* of the state machine.
StateMachineProp ==
    [][\A j \in Jobs :
          state'[j] # state[j] => <<state[j], state'[j]>> \in Transitions]_vars

=============================================================================
