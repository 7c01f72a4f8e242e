------------------------ MODULE MCSharedLedgerRefinement ------------------------
(***************************************************************************)
(* SharedLedger refines JobLedger: replicas, listeners, leases, batches    *)
(* and crashes and all, the shared ledger looks to its callers like the    *)
(* contract with every operation one atomic step.  TLC checks the property *)
(* RefinesJobLedger (JobLedger's Spec under the mapping below).  For TLC   *)
(* only (tla-checker reads no EXTENDS or INSTANCE of user modules).        *)
(*                                                                         *)
(* Where each operation takes effect: at the commit of the batch that      *)
(* carries it (Submit, Start at the claim, Finish), in the batch's order:  *)
(* its end, its admissions, its claim; the reaper's and a restart's FAILED *)
(* at theirs (Fail); Wait at WaitRead, the read of the row after the       *)
(* registration.  A commit that carries several operations is one step of  *)
(* SharedLedger and several of JobLedger: the variable pend holds the      *)
(* contract's states between them, shown by stuttering steps that follow   *)
(* the commit before any other step (a stuttering variable: NextR's        *)
(* behaviours are SharedLedger's with steps that change none of its        *)
(* variables added).  The depth is the ledger row, a counter, not          *)
(* recomputed from the rows.  A waiter blocked on a job whose end is       *)
(* committed is, to the contract, already woken: its wakeup is in flight   *)
(* (the notification, or the re-read after a reconnect), and its receipt   *)
(* is a stuttering step.  Renewals, transfers, failed batches that did not *)
(* commit, listener drops and reconnects, LISTEN, a crash's loss of the    *)
(* worker's call change nothing the contract sees; a crash ends its        *)
(* waiters' calls (WaitVanish).  A keyed Submit that admits is the        *)
(* contract's SubmitKeyed, with the key its row holds; a replay changes    *)
(* nothing the contract sees.                                              *)
(*                                                                         *)
(* What the mapping cannot see: a wakeup that never comes is a liveness    *)
(* failure, and refinement of the contract's safety says nothing of it;    *)
(* SharedLedger's NoLostWakeupInv states it as a safety property instead.  *)
(* The lease is not in the contract either (a reaper's FAILED is a legal   *)
(* Fail whenever it comes): LeaseHeldInv and HeldNotReapedInv are          *)
(* SharedLedger's own.                                                     *)
(***************************************************************************)
EXTENDS SharedLedger, TLC

VARIABLE pend  \* the contract's states a commit passes through, to show

\* The clock may pass MaxTime until an orphan's lease lapses (Tick): the
\* contract's bound is MaxTime + LeaseTTL.

\* The rows and the ledger row's depth as the contract sees them.
View(s, t, sd, l, c, o, d, k) ==
    [st |-> s, table |-> t, started |-> sd, lru |-> l, completedAt |-> c,
     outcome |-> o, depth |-> d, keyOf |-> k]

RECURSIVE SeqOf(_)
SeqOf(S) == IF S = {} THEN <<>>
            ELSE LET x == CHOOSE x \in S : TRUE IN <<x>> \o SeqOf(S \ {x})

\* The contract's states after each operation of the step from the
\* current state to the next but the last (the next state itself): its
\* end, then its admissions one by one (the first with the retention
\* pass), then its claim; the depth is the ledger row's, less the end's
\* decrement, plus the admissions shown so far.
Between ==
    LET E  == {j \in Jobs : st[j] \in Live /\ st'[j] \in Terminal}
        A  == SeqOf({j \in Jobs : st[j] = Absent /\ st'[j] # Absent})
        C  == {j \in Jobs : st[j] # "RUNNING" /\ st'[j] = "RUNNING"}
        n  == Cardinality(E) + Len(A) + Cardinality(C)
        sE == [j \in Jobs |-> IF j \in E THEN st'[j] ELSE st[j]]
        cE == [j \in Jobs |-> IF j \in E THEN completedAt'[j]
                                         ELSE completedAt[j]]
        oE == [j \in Jobs |-> IF j \in E THEN outcome'[j] ELSE outcome[j]]
        lE == IF E = {} THEN lru ELSE Append(lru, CHOOSE j \in E : TRUE)
        \* after E and the first m admissions, each holding its key
        S(m) ==
            IF m = 0 THEN View(sE, table, started, lE, cE, oE,
                               depth - Cardinality(E), key)
            ELSE LET done == {A[i] : i \in 1..m}
                     rest == {A[i] : i \in (m + 1)..Len(A)}
                 IN  View([j \in Jobs |-> IF j \in done THEN "PENDING"
                                                        ELSE sE[j]],
                          table' \ rest, started, lru', cE, oE,
                          depth - Cardinality(E) + m,
                          [j \in Jobs |-> IF j \in done THEN key'[j]
                                                     ELSE key[j]])
    IN  IF n <= 1 THEN <<>>
        ELSE [i \in 1..(n - 1) |-> S(i - Cardinality(E))]

InitR == Init /\ pend = <<>>

NextR ==
    \/ /\ pend = <<>>
       /\ Next
       /\ pend' = Between
    \/ /\ pend # <<>>
       /\ pend' = Tail(pend)
       /\ UNCHANGED vars

V == IF pend = <<>>
        THEN View(st, table, started, lru, completedAt, outcome, depth, key)
        ELSE Head(pend)

AbsWpc ==
    [w \in Waiters |->
        CASE wpc[w] \in {"Idle", "Registered"} -> "Idle"
          [] wpc[w] \in {"Blocked", "Reread"} ->
                IF V.st[wjob[w]] \in Terminal THEN "Woken" ELSE "Blocked"
          [] wpc[w] = "Woken" -> "Woken"
          [] OTHER -> "Done"]

AbsWjob ==
    [w \in Waiters |->
        IF wpc[w] \in {"Idle", "Registered"} THEN NoJob ELSE wjob[w]]

\* A job's tenant is the contract's: the same shares and bound.
Abs == INSTANCE JobLedger WITH
    Shares       <- Shares,
    TenantMax    <- TenantMax,
    SplitAdmission <- FALSE,
    checked      <- {},
    Keys         <- Keys,
    Readers      <- {},
    Outcomes     <- {"DONE", "FAILED"},
    WaitDeadline <- FALSE,
    MaxTime      <- MaxTime + LeaseTTL,
    st           <- V.st,
    table        <- V.table,
    started      <- V.started,
    lru          <- V.lru,
    completedAt  <- V.completedAt,
    outcome      <- V.outcome,
    taken        <- [j \in Jobs |-> FALSE],
    TakeRefusals <- FALSE,
    refusedTake  <- [j \in Jobs |-> FALSE],
    keyOf        <- V.keyOf,
    depth        <- V.depth,
    now          <- dbnow,
    wpc          <- AbsWpc,
    wjob         <- AbsWjob,
    rview        <- [r \in {} |-> [kind |-> "none", st |-> "ABSENT"]]

RefinesJobLedger == Abs!Spec

=============================================================================
