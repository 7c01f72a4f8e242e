------------------------- MODULE MCJobTableRefinement -------------------------
(***************************************************************************)
(* JobTable refines JobLedger: the memory store, threads, mutexes and all, *)
(* looks to its callers like the contract with every operation one atomic  *)
(* step.  The refinement mapping below computes the contract's variables   *)
(* from JobTable's; TLC checks the property RefinesJobLedger (JobLedger's  *)
(* Spec under the mapping): the mapped initial state is one of JobLedger's *)
(* and every step of JobTable is a step of JobLedger's Next or leaves the  *)
(* mapped variables unchanged.  For TLC only (tla-checker reads no         *)
(* EXTENDS or INSTANCE of user modules).                                   *)
(*                                                                         *)
(* Where each operation takes effect (its linearization point):            *)
(*   Submit       SubmitInsert, the insertion under the table mutex (the   *)
(*                CAS before it took a slot of the depth counter: the      *)
(*                contract's depth is that counter less the slots taken    *)
(*                by admissions not yet inserted; for a bounded tenant,    *)
(*                SubmitAdmit, which admits and inserts in one step, with  *)
(*                the table mutex held since SubmitLock checked the        *)
(*                tenant's room, so the room is still there)               *)
(*   Start, TakeRequest  their one critical section of the job mutex; a    *)
(*                TakeRequest of a live job refused (nothing moved out)    *)
(*                is the contract's TakeTaken, the first time a refusal    *)
(*                with ErrRequestTaken is recorded (history refusals, a    *)
(*                set: later ones, and a misuser's skipped call, are not   *)
(*                told apart from no call; the auxiliary variable retaken  *)
(*                keeps which job's take was refused)                      *)
(*   Finish, Fail, Timeout  TerminateRelease, the step that stores the     *)
(*                terminal state, decrements and closes done (the payload  *)
(*                written in TerminateWrite is not visible before it:      *)
(*                the job mutex is held between the two)                   *)
(*   Wait         WaitCheck on a terminal or missing job; WaitRegister,    *)
(*                which takes done, for a live one; the receive and the    *)
(*                return are the contract's WaitReturn                     *)
(*   Snapshot, Result  the step that copies the view                       *)
(* Refused calls, the admission loop's loads and CAS, SubmitLock, the      *)
(* clock reads and TerminateWrite change no mapped variable: stuttering    *)
(* steps.  The tenants are the contract's (Shares, TenantMax): its bound   *)
(* counts the live jobs of each share from the states, which tlive, the    *)
(* table's counter, equals (TenantDepthInv), so the counter needs no       *)
(* mapping of its own.                                                     *)
(***************************************************************************)
EXTENDS JobTable, TLC

VARIABLE retaken  \* retaken[j]: a TakeRequest of live j was refused

Live == {"PENDING", "RUNNING"}

\* t's TakeRequest of live job j in this step is refused, with
\* ErrRequestTaken recorded for the first time.
TakeRefused(t, j) ==
    /\ pc[t] \in {"TakeRequest", "MisuseTake"}
    /\ pc'[t] = "Terminate"
    /\ tjob[t] = j
    /\ j \in table /\ state[j] \in Live
    /\ takes'[j] = takes[j]
    /\ "TakeTaken" \in refusals' \ refusals

InitR == Init /\ retaken = [j \in Jobs |-> FALSE]

NextR ==
    /\ Next
    /\ retaken' = [j \in Jobs |->
                     retaken[j] \/ \E t \in Runners \cup Misusers :
                                       TakeRefused(t, j)]

\* The contract's view of a waiter: registered ("Blocked") once
\* WaitRegister took done, woken once done is closed.
AbsWpc ==
    [w \in Waiters |->
        CASE pc[w] \in {"WaitCheck", "WaitRegister"} -> "Idle"
          [] pc[w] = "WaitBlock" ->
                IF done[tjob[w]] = "closed" THEN "Woken" ELSE "Blocked"
          [] pc[w] = "WaitReturn" -> "Woken"
          [] pc[w] = "WaitExpired" -> "Expired"
          [] OTHER -> "Done"]

AbsWjob ==
    [w \in Waiters |->
        IF pc[w] \in {"WaitCheck", "WaitRegister"} THEN NoJob ELSE tjob[w]]

AbsWout ==
    [w \in Waiters |->
        CASE view[w].kind = "snapshot" -> "ok"
          [] view[w].kind = "deadline" -> "deadline"
          [] OTHER -> "none"]

Abs == INSTANCE JobLedger WITH
    Shares       <- Shares,
    TenantMax    <- TenantMax,
    SplitAdmission <- FALSE,
    checked      <- {},
    Keys        <- {},
    Readers     <- Pollers,
    Outcomes    <- {"DONE", "FAILED", "TIMEOUT"},
    st          <- state,
    taken       <- [j \in Jobs |-> takes[j] > 0],
    started     <- [j \in Jobs |-> startedAt[j] # NoTime],
    keyOf       <- [j \in Jobs |-> "nokey"],
    TakeRefusals <- TRUE,
    refusedTake <- retaken,
    depth       <- depth - Cardinality(admitted \ (table \cup evicted)),
    completedAt <- [j \in Jobs |->
                      IF state[j] \in Terminal THEN completedAt[j] ELSE NoTime],
    wpc         <- AbsWpc,
    wjob        <- AbsWjob,
    wout        <- AbsWout,
    rview       <- [p \in Pollers |-> [kind |-> view[p].kind, st |-> view[p].st]]

RefinesJobLedger == Abs!Spec

=============================================================================
