------------------------ MODULE MCSharedLedgerRefinement ------------------------
(***************************************************************************)
(* SharedLedger refines JobLedger: replicas, listeners, leases and crashes *)
(* and all, the shared ledger looks to its callers like the contract with  *)
(* every operation one atomic step.  TLC checks the property               *)
(* RefinesJobLedger (JobLedger's Spec under the mapping below).  For TLC   *)
(* only (tla-checker reads no EXTENDS or INSTANCE of user modules).        *)
(*                                                                         *)
(* Where each operation takes effect: Submit at SubmitTx's commit (with    *)
(* read_then_write, at SubmitWrite's); Start at Claim; Finish at           *)
(* WorkerEnd's commit; the reaper's and a restart's FAILED at theirs       *)
(* (Fail); Wait at WaitRead, the read of the row after the registration.   *)
(* A waiter blocked on a job whose end is committed is, to the contract,   *)
(* already woken: its wakeup is in flight (the notification, or the        *)
(* re-read after a reconnect), and its receipt is a stuttering step.       *)
(* Renewals, listener drops and reconnects, LISTEN, a crash's loss of the  *)
(* worker's call change nothing the contract sees; a crash ends its        *)
(* waiters' calls (WaitVanish).                                            *)
(*                                                                         *)
(* What the mapping cannot see: a wakeup that never comes is a liveness    *)
(* failure, and refinement of the contract's safety says nothing of it;    *)
(* SharedLedger's NoLostWakeupInv states it as a safety property instead.  *)
(* The lease is not in the contract either (a reaper's FAILED is a legal   *)
(* Fail whenever it comes): LeaseHeldInv is SharedLedger's own.            *)
(***************************************************************************)
EXTENDS SharedLedger, TLC

AbsWpc ==
    [w \in Waiters |->
        CASE wpc[w] \in {"Idle", "Registered"} -> "Idle"
          [] wpc[w] \in {"Blocked", "Reread"} ->
                IF st[wjob[w]] \in Terminal THEN "Woken" ELSE "Blocked"
          [] wpc[w] = "Woken" -> "Woken"
          [] OTHER -> "Done"]

AbsWjob ==
    [w \in Waiters |->
        IF wpc[w] \in {"Idle", "Registered"} THEN NoJob ELSE wjob[w]]

Abs == INSTANCE JobLedger WITH
    Keys         <- {},
    Readers      <- {},
    Outcomes     <- {"DONE", "FAILED"},
    WaitDeadline <- FALSE,
    taken        <- [j \in Jobs |-> FALSE],
    keyOf        <- [j \in Jobs |-> "nokey"],
    depth        <- Cardinality({j \in table : st[j] \in Live}),
    now          <- dbnow,
    wpc          <- AbsWpc,
    wjob         <- AbsWjob,
    rview        <- [r \in {} |-> [kind |-> "none", st |-> "ABSENT"]]

RefinesJobLedger == Abs!Spec

=============================================================================
