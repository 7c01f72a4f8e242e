----------------------- MODULE MCDurableLedgerRefinement -----------------------
(***************************************************************************)
(* DurableLedger refines JobLedger: the single writer, its batches, failed *)
(* commits, crashes and restarts look to the store's callers like the      *)
(* contract with every operation one atomic step.  TLC checks the property *)
(* RefinesJobLedger (JobLedger's Spec under the mapping below).  For TLC   *)
(* only (tla-checker reads no EXTENDS or INSTANCE of user modules).        *)
(*                                                                         *)
(* What the contract sees is the committed rows, db.  Each operation takes *)
(* effect at the commit of its batch, in the order the writer took it      *)
(* (Submit with its retention pass, Start, an end), at the time the writer *)
(* took it: the writer decides and applies each against the clock as it    *)
(* takes it, so while a batch is open the contract's clock stays at the    *)
(* time of its first operation, and the commit shows the ticks between its *)
(* operations.  A restart's FAILED takes effect at Open, one job at a time *)
(* in the order Open puts them in the retention order.  A commit or an     *)
(* Open that carries several operations is one step of DurableLedger and   *)
(* several of JobLedger: pend holds the contract's states between them,    *)
(* shown by stuttering steps that follow it before any other step.  The    *)
(* depth is the depth row, a counter, not recomputed from the rows.        *)
(*                                                                         *)
(* Auxiliary variables, which DurableLedger's steps determine and never    *)
(* read: order, the rows after each operation the writer accepted into the *)
(* open transaction and the time it took it, in order (the batch is a      *)
(* set); doneAt, each job's completion time, committed or in the open      *)
(* transaction, which the contract keeps after retention deletes the row   *)
(* (a batch may end a job and delete it: the clock ticked between); named, *)
(* the waiters that made the contract's Wait step (their read of the row,  *)
(* or a wakeup before it); ok, the waiters whose Wait returned a terminal  *)
(* state.                                                                  *)
(*                                                                         *)
(* A waiter registered before the commit that ends its job and woken       *)
(* before it read the row has, to the contract, called Wait on a terminal  *)
(* job and returned: its WaitReturn is a stuttering step.  A waiter        *)
(* blocked on a job whose end is committed is, to the contract, woken.  A  *)
(* crash ends its waiters' calls (WaitVanish).  Runners, timers, pollers,  *)
(* the queue, Take, Ack and Publish change nothing the contract sees       *)
(* (pollers are not mapped: a read changes no state); a failed commit or a *)
(* crash ends the open batch, and the ticks it let pass are shown then.    *)
(* A keyed Submit that admits is the contract's SubmitKeyed, with the key  *)
(* its row holds; a replay changes nothing the contract sees.              *)
(***************************************************************************)
EXTENDS DurableLedger, TLC

VARIABLES
    pend,    \* the contract's states a commit or an Open passes through
    order,   \* [rows, at] after each operation accepted into the open
             \* transaction, in order
    doneAt,  \* doneAt[j]: j's completion time, kept after its row is deleted
    named,   \* named[w]: w's Wait has named its job to the contract
    ok       \* ok[w]: w's Wait returned a terminal state

auxVars == <<pend, order, doneAt, named, ok>>

\* The contract's clock: the time of the open batch's first operation.
CNow == IF order = <<>> THEN now ELSE order[1].at

\* The rows t, at the contract's clock c, as the contract sees them.
View(t, c) ==
    [now |-> c,
     st |-> [j \in Jobs |-> IF t.st[j] # Absent THEN t.st[j] ELSE t.gone[j]],
     table |-> {j \in Jobs : t.st[j] # Absent},
     started |-> t.started,
     keyOf |-> t.key,
     lru |-> t.lru,
     completedAt |-> [j \in Jobs |-> IF t.at[j] # NoTime THEN t.at[j]
                                     ELSE IF t.gone[j] # Absent THEN doneAt[j]
                                     ELSE NoTime],
     depth |-> t.depth]

\* The contract's states of a commit, from rows t at clock c on: each
\* operation of order from the i-th at its time, the clock ticking up to
\* it first, then up to now.
RECURSIVE CommitSeq(_, _, _)
CommitSeq(t, i, c) ==
    IF i > Len(order)
       THEN [k \in 1..(now - c) |-> View(t, c + k)]
    ELSE IF c < order[i].at
       THEN <<View(t, c + 1)>> \o CommitSeq(t, i, c + 1)
    ELSE <<View(order[i].rows, c)>> \o CommitSeq(order[i].rows, i + 1, c)

\* The rows after Open has failed the first i RUNNING rows of db (in the
\* order Recovered puts them in the retention order).
Failed(i) ==
    LET r == SeqOf({j \in Jobs : db.st[j] = "RUNNING"})
        f == {r[k] : k \in 1..i}
    IN  [db EXCEPT
            !.st = [j \in Jobs |-> IF j \in f THEN "FAILED" ELSE db.st[j]],
            !.at = [j \in Jobs |-> IF j \in f THEN now ELSE db.at[j]],
            !.lru = db.lru \o SubSeq(r, 1, i),
            !.depth = db.depth - i]

\* The contract's states strictly between this state and the next: after
\* each step of a commit but the last; after each FAILED of an Open but the
\* last; after a crash's or a failed commit's end of its callers and each
\* tick the batch it drops let pass but the last.
AllButLast(s) == IF Len(s) <= 1 THEN <<>> ELSE SubSeq(s, 1, Len(s) - 1)

Between ==
    IF wphase = "take" /\ wphase' = "ack"
       THEN AllButLast(CommitSeq(db, 1, CNow))
    ELSE IF ~up /\ up'
       THEN LET n == Cardinality({j \in Jobs : db.st[j] = "RUNNING"}) IN
            [i \in 1..(n - 1) |-> View(Failed(i), now)]
    ELSE IF order # <<>> /\ batch' = {}
       THEN AllButLast(<<View(db, CNow)>> \o
                       [k \in 1..(now - CNow) |-> View(db, CNow + k)])
    ELSE <<>>

\* The operation a Take accepted, appended; emptied by a commit, a failed
\* commit and a crash.
OrderNext ==
    IF batch' = {} \/ wphase' # "take" THEN <<>>
    ELSE LET new == {e \in batch' \ batch : e.res = "ok"} IN
         IF new = {} THEN order
         ELSE Append(order, [rows |-> tx', at |-> now])

\* A waiter names its job by reading its row, or by being woken before it
\* read it; a crash names nothing.
NamedNext ==
    [w \in Waiters |->
        named[w] \/ (up' /\ wpc[w] = "read" /\ wpc'[w] # "read")]

OkNext ==
    [w \in Waiters |->
        \/ ok[w]
        \/ /\ up'
           /\ \/ wpc[w] = "read" /\ wpc'[w] = "woken"
              \/ wpc[w] = "read" /\ wpc'[w] = "done"
                 /\ db.st[wjob[w]] \in Terminal
              \/ wpc[w] = "woken" /\ wpc'[w] = "done"]

InitR ==
    /\ Init
    /\ pend = <<>>
    /\ order = <<>>
    /\ doneAt = [j \in Jobs |-> NoTime]
    /\ named = [w \in Waiters |-> FALSE]
    /\ ok = [w \in Waiters |-> FALSE]

NextR ==
    \/ /\ pend = <<>>
       /\ Next
       /\ pend' = Between
       /\ order' = OrderNext
       /\ doneAt' = [j \in Jobs |-> IF db'.at[j] # NoTime THEN db'.at[j]
                                    ELSE IF tx'.at[j] # NoTime THEN tx'.at[j]
                                    ELSE doneAt[j]]
       /\ named' = NamedNext
       /\ ok' = OkNext
    \/ /\ pend # <<>>
       /\ pend' = Tail(pend)
       /\ UNCHANGED <<vars, order, doneAt, named, ok>>

V == IF pend = <<>> THEN View(db, CNow) ELSE Head(pend)

\* A waiter woken before it read its row has already returned, to the
\* contract.
AbsWpc ==
    [w \in Waiters |->
        CASE wpc[w] \in {"idle", "read"} -> "Idle"
          [] wpc[w] = "blocked" ->
                IF V.st[wjob[w]] \in Terminal THEN "Woken" ELSE "Blocked"
          [] wpc[w] = "woken" -> IF ok[w] THEN "Done" ELSE "Woken"
          [] OTHER -> "Done"]

\* A job's tenant is the contract's: the same shares and bound.
Abs == INSTANCE JobLedger WITH
    Shares       <- Shares,
    TenantMax    <- TenantMax,
    SplitAdmission <- FALSE,
    checked      <- {},
    Keys         <- Keys,
    Readers      <- {},
    Outcomes     <- RunnerOutcomes \cup {"FAILED", "TIMEOUT"},
    WaitDeadline <- FALSE,
    st           <- V.st,
    table        <- V.table,
    started      <- V.started,
    lru          <- V.lru,
    completedAt  <- V.completedAt,
    depth        <- V.depth,
    now          <- V.now,
    outcome      <- [j \in Jobs |-> IF V.st[j] \in Terminal THEN V.st[j]
                                    ELSE Absent],
    taken        <- [j \in Jobs |-> FALSE],
    TakeRefusals <- FALSE,
    refusedTake  <- [j \in Jobs |-> FALSE],
    keyOf        <- V.keyOf,
    wpc          <- AbsWpc,
    wjob         <- [w \in Waiters |-> IF named[w] THEN wjob[w] ELSE "nojob"],
    wout         <- [w \in Waiters |-> IF ok[w] THEN "ok" ELSE "none"],
    rview        <- [r \in {} |-> [kind |-> "none", st |-> Absent]]

RefinesJobLedger == Abs!Spec

=============================================================================
