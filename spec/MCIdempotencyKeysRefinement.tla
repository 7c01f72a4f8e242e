--------------------- MODULE MCIdempotencyKeysRefinement ---------------------
(***************************************************************************)
(* IdempotencyKeys refines JobLedger: jobtable's keyed submits, with the   *)
(* table mutex, the key index and the evictions that free a key, look to   *)
(* their callers like the contract's SubmitKeyed, every call one atomic    *)
(* step.  TLC checks the property RefinesJobLedger (JobLedger's Spec under *)
(* the mapping below).  For TLC only (tla-checker reads no EXTENDS or      *)
(* INSTANCE of user modules).                                              *)
(*                                                                         *)
(* Where each operation takes effect: SubmitKeyed at SubmitInsert, the     *)
(* insertion under the key (a replay and ErrQueueFull change nothing the   *)
(* contract sees); an end at End.  The depth is IdempotencyKeys' counter,  *)
(* less the slots SubmitCheck took for insertions still to come.           *)
(*                                                                         *)
(* The module has no clock: a job's retention is up to an eviction that    *)
(* may come at any time.  The contract's retention runs inside an          *)
(* admission, so the mapping shows every eviction there: the contract's    *)
(* clock ticks once, at the first call, and every completion time is 0,    *)
(* with a TTL of 1, so that each admission's retention pass removes every  *)
(* job ended since the one before.  A job ended and not yet evicted is     *)
(* gone to the contract from the next admission on (a replay that still    *)
(* finds it is no step); one evicted is gone from the next admission on,   *)
(* so a key is free to the contract no sooner than to the index.           *)
(* Auxiliary variables, which IdempotencyKeys' steps determine and never   *)
(* read: shown, the contract's table; ended, the jobs ended since the last *)
(* admission, in the order they ended (the contract's retention list).     *)
(***************************************************************************)
EXTENDS IdempotencyKeys, Integers, Sequences, TLC

VARIABLES
    shown,  \* the jobs in the contract's table
    ended   \* the jobs ended since the last insertion, in order

Inserted(i) == st[i] = "ABSENT" /\ st'[i] = "LIVE"
Ended(i)    == st[i] = "LIVE" /\ st'[i] = "ENDED"

InitR == Init /\ shown = {} /\ ended = <<>>

NextR ==
    /\ Next
    /\ \/ \E i \in Ids :
             /\ Inserted(i)
             /\ shown' = (shown \ {ended[n] : n \in DOMAIN ended}) \cup {i}
             /\ ended' = <<>>
       \/ \E i \in Ids :
             /\ Ended(i)
             /\ ended' = Append(ended, i)
             /\ UNCHANGED shown
       \/ /\ \A i \in Ids : ~Inserted(i) /\ ~Ended(i)
          /\ UNCHANGED <<shown, ended>>

Abs == INSTANCE JobLedger WITH
    Shares       <- {},
    TenantMax    <- 0,
    SplitAdmission <- FALSE,
    checked      <- {},
    Jobs         <- Ids,
    Waiters      <- {},
    Readers      <- {},
    MaxCompleted <- 1,
    TTL          <- 1,
    MaxTime      <- 1,
    Outcomes     <- {"DONE"},
    WaitDeadline <- FALSE,
    TakeRefusals <- FALSE,
    st           <- [i \in Ids |->
                       CASE st[i] = "ABSENT" -> "ABSENT"
                         [] st[i] = "LIVE" -> "PENDING"
                         [] OTHER -> "DONE"],
    table        <- shown,
    taken        <- [i \in Ids |-> FALSE],
    started      <- [i \in Ids |-> FALSE],
    keyOf        <- keyOf,
    depth        <- depth - Cardinality({s \in Submitters : pc[s] = "Insert"}),
    lru          <- ended,
    completedAt  <- [i \in Ids |->
                       IF st[i] \in {"ENDED", "EVICTED"} THEN 0 ELSE -1],
    now          <- IF \E s \in Submitters : pc[s] # "Idle" THEN 1 ELSE 0,
    outcome      <- [i \in Ids |->
                       IF st[i] \in {"ENDED", "EVICTED"} THEN "DONE"
                       ELSE "ABSENT"],
    wpc          <- [w \in {} |-> "Idle"],
    wjob         <- [w \in {} |-> "nojob"],
    wout         <- [w \in {} |-> "none"],
    rview        <- [r \in {} |-> [kind |-> "none", st |-> "ABSENT"]],
    refusedTake  <- [i \in Ids |-> FALSE]

RefinesJobLedger == Abs!Spec

=============================================================================
