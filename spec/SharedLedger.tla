----------------------------- MODULE SharedLedger -----------------------------
(***************************************************************************)
(* Replicas of the server sharing one ledger in a PostgreSQL database      *)
(* (package store/postgres; docs/scaling.md): what a replica keeps         *)
(* locally (waiters, a listener, a worker, its writer's queue), what the   *)
(* database keeps, and how a wakeup crosses from one to another.           *)
(*                                                                         *)
(* The database's transactions are atomic steps (READ COMMITTED, with      *)
(* every write that changes the depth locking the ledger row first, so     *)
(* they are one at a time; a batch of claims only changes the rows it      *)
(* locks, skipping locked ones):                                           *)
(*   Commit     a replica's writer sends a batch of its queued writes as   *)
(*              one transaction (write.go): the ledger row locked, the     *)
(*              end (the state guard, the completion time and order, the   *)
(*              decrement, pg_notify, delivered on commit to every         *)
(*              listener connected and listening then), the admissions     *)
(*              in queue order while the bound leaves room, the retention  *)
(*              pass, the claim of a PENDING job (FOR UPDATE SKIP LOCKED)  *)
(*              with its lease: owner and expiry in database time          *)
(*              (claim.go); the callers are answered after the commit      *)
(*   Abort      the batch rolled back: nothing of it happened; its writes  *)
(*              are tried again (no change: a stuttering step) or answered *)
(*              with an error                                              *)
(*   Lost       the connection failed with the batch sent: it committed or *)
(*              not; its end is tried again, its admissions and claim are  *)
(*              answered with an error                                     *)
(*   Reap       the reaper's FAILED of a job whose lease lapsed and that   *)
(*              no caller of its replica holds (reap.go), and a restarted  *)
(*              replica's FAILED of its own RUNNING jobs (restart.go): an  *)
(*              end as above                                               *)
(* A claimed job is held (held.go): the keeper renews its lease within     *)
(* every tick of the clock while its replica reaches the database          *)
(* (lease.go); its request is transferred after the claim, then the lease  *)
(* is renewed once more.  A replica LISTENs before it serves.  A waiter    *)
(* registers locally, then reads the row, then blocks; the notification    *)
(* wakes the local waiters of its job.  A listener's connection may drop   *)
(* (notifications sent while it is down are lost, and those not yet read   *)
(* with it); on reconnecting it LISTENs again and every local waiter       *)
(* re-reads its job.  A replica may crash: its waiters, its worker's call, *)
(* its queue and its listener vanish, the database keeps everything; on    *)
(* restart it fails its own RUNNING jobs (their owner is itself) and       *)
(* leaves every other replica's alone.                                     *)
(*                                                                         *)
(* Not modelled: SQL, TakeRequest (one UPDATE whose WHERE is the whole     *)
(* check), reads other than Wait's, cancel, a waiter's deadline, the      *)
(* database's own failover.  One worker per replica, so a batch holds at   *)
(* most one end or one claim.  The job state machine inside a process is   *)
(* JobTable.tla's subject.                                                 *)
(*                                                                         *)
(* Idempotency keys: a key is a column of its job's row (a unique index on *)
(* it), so it lives as long as the row and survives every crash.  A batch  *)
(* looks its submits' keys up under the ledger row's lock, before its      *)
(* retention pass: a row that holds the key answers the submit (a replay,  *)
(* admitting nothing), and the others are admitted as any, each holding    *)
(* its key.  Replicas racing one fresh key are one batch after the other:  *)
(* the second finds the first's row (KeyInv, AnswerKeyInv).  Keys are one  *)
(* set for all tenants here, as in JobLedger.tla (the store's are each     *)
(* tenant's own; the configurations with keys have one tenant).            *)
(*                                                                         *)
(* Tenants: a job belongs to the tenant whose share of Jobs holds it      *)
(* (Shares, as in JobLedger.tla; a job in none is of a tenant that has no  *)
(* bound), and a batch's submits are each of some tenant.  Under the       *)
(* ledger row's lock the batch admits them in order: a submit only if its  *)
(* tenant's live jobs, counted there, and the tenant's earlier submits of  *)
(* the batch are below TenantMax (0: no bound), and then only if its rank  *)
(* among the submits that passed their tenant's bound is within the room   *)
(* the ledger's bound leaves (TenantBoundInv).                             *)
(*                                                                         *)
(* Defect puts back one defect; its configuration expects the invariant    *)
(* that names it to fail.  Self-contained, for tla-checker.                *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,          \* job ids, submitted in a fixed order
    Keys,          \* idempotency keys a Submit may be given
    Replicas,      \* server processes sharing the database
    Waiters,       \* callers of Wait, one call each (HomeOf: where)
    Submitters,    \* callers of Submit on each replica
    MaxQueue,      \* Config.MaxQueue, for all replicas together
    MaxCompleted,  \* Config.MaxCompleted
    TTL,           \* Config.JobTTL, in ticks of the database clock
    LeaseTTL,      \* a lease's length, in ticks of the database clock
    MaxTime,       \* bound of the database clock
    MaxCrashes,    \* replica crashes at most
    MaxDrops,      \* listener connection drops at most
    MaxFailures,   \* batches that fail (Abort with errors, Lost) at most
    Shares,        \* the tenants, each as the set of its jobs (disjoint)
    TenantMax,     \* each tenant's bound on its live jobs; 0 for none
    Defect         \* "none", or the defect to put back (see Defects)

\* notify_before_commit: the worker's end sends its notification before
\* the commit.  notify_after_commit: after it, outside the transaction.
\* no_reread: a reconnected listener does not make the waiters re-read.
\* listen_after_serve: a restarted replica serves before it LISTENs.
\* read_then_write: the writer reads the depth, then writes it in a second
\* statement.  reaper_ignores_lease: the reaper fails any RUNNING job,
\* lease or not.  restart_fails_all: a restarted replica fails every
\* RUNNING job (right for one process, wrong for replicas).  bound_once: a
\* batch checks the bound once, admitting all its submits when the depth
\* is below it.  retry_overwrites: a retried end has no state guard: it
\* writes its state over a terminal row (decrementing for a live one only).
\* renew_after_transfer: the lease is stamped at the claim and the keeper
\* holds the job only once its request is transferred.
Defects == {"none", "notify_before_commit", "notify_after_commit",
            "no_reread", "listen_after_serve", "read_then_write",
            "reaper_ignores_lease", "restart_fails_all", "bound_once",
            "retry_overwrites", "renew_after_transfer"}

ASSUME
    /\ Submitters \in Nat
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat \ {0}
    /\ TTL \in Nat \ {0}
    /\ LeaseTTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ MaxCrashes \in Nat
    /\ MaxDrops \in Nat
    /\ MaxFailures \in Nat
    /\ Shares \subseteq SUBSET Jobs
    /\ \A s1, s2 \in Shares : s1 # s2 => s1 \cap s2 = {}
    /\ TenantMax \in Nat
    /\ Defect \in Defects

Absent   == "ABSENT"
NoJob    == "nojob"
NoOwner  == "noowner"
NoTime   == -1
NoKey    == "nokey"
Live     == {"PENDING", "RUNNING"}
Terminal == {"DONE", "FAILED", "TIMEOUT"}
States   == Live \cup Terminal

\* Every waiter calls Wait on the first replica, but for a second waiter,
\* which calls it on another (so that one end wakes waiters on two
\* replicas); the jobs run wherever a worker claims them, so its wakeup
\* crosses replicas.
Home == CHOOSE r \in Replicas : TRUE
FirstWaiter == CHOOSE w \in Waiters : TRUE
HomeOf(w) ==
    IF w = FirstWaiter \/ Replicas = {Home} THEN Home
    ELSE CHOOSE r \in Replicas \ {Home} : TRUE

VARIABLES
    \* the database (committed)
    st,           \* st[j]: Absent or the row's state (kept after eviction)
    table,        \* the rows: submitted, not deleted by retention
    started,      \* started[j]: a claim made it RUNNING
    key,          \* key[j]: the idempotency key j was inserted with (idem_key),
                  \*   or NoKey; kept after the row is deleted, but only a row
                  \*   holds its key
    depth,        \* the ledger row's depth
    lru,          \* terminal rows, in completion order
    completedAt,  \* completedAt[j], database time, or NoTime
    owner,        \* owner[j]: the replica holding j's lease, or NoOwner
    expiry,       \* expiry[j]: when that lease lapses (database time)
    dbnow,        \* the database clock
    \* each replica
    phase,        \* phase[r]: "serving", "down" (crashed, restarting)
    conn,         \* conn[r]: its writer's connection, "up" or "lost"
    lst,          \* lst[r]: "listening", "lost" (reconnecting), "off"
    inbox,        \* inbox[r]: notifications delivered, not yet read
    wk,           \* wk[r]: its worker: [pc, job, lost] (lost: the
                  \*   connection failed while it had the job)
    wr,           \* wr[r]: its writer (read_then_write): [pc, d]
    wpc,          \* wpc[w]: "Idle", "Registered", "Blocked", "Reread",
                  \*   "Woken", "Done"
    wjob,         \* wjob[w]: the job w waits on
    wout,         \* wout[w]: what Wait returned: "none" or "ok"
    \* history, for the invariants only
    outcome,      \* the first terminal state of each job
    acked,        \* jobs whose Submit was acknowledged
    answers,      \* [key, job]: each keyed Submit's key and the job it was
                  \*   answered with (admitted, or replayed)
    crashes,      \* crashes so far
    drops,        \* listener drops so far
    failures      \* failed batches so far

vars == <<st, table, started, key, depth, lru, completedAt, owner, expiry,
          dbnow, phase, conn, lst, inbox, wk, wr, wpc, wjob, wout, outcome,
          acked, answers, crashes, drops, failures>>

Range(s) == {s[i] : i \in DOMAIN s}

IdleWorker == [pc |-> "Idle", job |-> NoJob, lost |-> FALSE]
IdleWriter == [pc |-> "Idle", d |-> 0]

\* The worker holds its job (held.go) from the claim until its end's
\* outcome is known (Retry: its end is tried again; Notified: the end of
\* notify_before_commit); renew_after_transfer: once its request is
\* transferred.
HoldPcs == IF Defect = "renew_after_transfer"
              THEN {"Running", "Retry", "Notified"}
              ELSE {"Transfer", "Running", "Retry", "Notified"}

Holds(r, j) == wk[r].pc \in HoldPcs /\ wk[r].job = j

\* The keeper of j's owner renews its lease: the owner serves, reaches
\* the database and holds j.
Renewed(j) ==
    /\ st[j] = "RUNNING"
    /\ phase[owner[j]] = "serving"
    /\ conn[owner[j]] = "up"
    /\ Holds(owner[j], j)

-----------------------------------------------------------------------------
(* Retention, run in a batch that admits.                                  *)

\* l the order of the terminal rows, c their completion times.
Expired(j, c) == c[j] + TTL <= dbnow

ExpiredPrefix(l, c) ==
    CHOOSE n \in 0..Len(l) :
        /\ \A i \in 1..n : Expired(l[i], c)
        /\ (n < Len(l)) => ~Expired(l[n + 1], c)

Swept(l, c) ==
    LET afterTTL == SubSeq(l, ExpiredPrefix(l, c) + 1, Len(l))
        extra    == IF Len(afterTTL) > MaxCompleted
                        THEN Len(afterTTL) - MaxCompleted ELSE 0
    IN  SubSeq(afterTTL, extra + 1, Len(afterTTL))

\* The tenants' pools of ids: each share, and the jobs of no bounded tenant.
Pools == {p \in Shares \cup {Jobs \ UNION Shares} : p # {}}

\* Ids are interchangeable within a tenant, so handing out the next ones of
\* its pool in a fixed order loses no behaviour up to renaming.
Unused == {j \in Jobs : st[j] = Absent}
NewIds(p, k) == CHOOSE s \in SUBSET (Unused \cap p) : Cardinality(s) = k

\* The tenants of a batch's n submits, in queue order: any, as long as each
\* pool has an id left for each of its submits.
TenantSeqs(n) ==
    {ts \in [1..n -> Pools] :
        \A p \in Pools : Cardinality({i \in 1..n : ts[i] = p}) <= Cardinality(Unused \cap p)}

\* What every listener that is listening has after the commit of j's end.
Notified(j) ==
    [r \in Replicas |-> IF lst[r] = "listening" THEN inbox[r] \cup {j}
                                                ELSE inbox[r]]

-----------------------------------------------------------------------------
Init ==
    /\ st = [j \in Jobs |-> Absent]
    /\ table = {}
    /\ started = [j \in Jobs |-> FALSE]
    /\ key = [j \in Jobs |-> NoKey]
    /\ depth = 0
    /\ lru = <<>>
    /\ completedAt = [j \in Jobs |-> NoTime]
    /\ owner = [j \in Jobs |-> NoOwner]
    /\ expiry = [j \in Jobs |-> 0]
    /\ dbnow = 0
    /\ phase = [r \in Replicas |-> "serving"]
    /\ conn = [r \in Replicas |-> "up"]
    /\ lst = [r \in Replicas |-> "listening"]
    /\ inbox = [r \in Replicas |-> {}]
    /\ wk = [r \in Replicas |-> IdleWorker]
    /\ wr = [r \in Replicas |-> IdleWriter]
    /\ wpc = [w \in Waiters |-> "Idle"]
    /\ wjob = [w \in Waiters |-> NoJob]
    /\ wout = [w \in Waiters |-> "none"]
    /\ outcome = [j \in Jobs |-> Absent]
    /\ acked = {}
    /\ answers = {}
    /\ crashes = 0
    /\ drops = 0
    /\ failures = 0

-----------------------------------------------------------------------------
(* The worker's calls between its Claim and its Finish.                    *)

\* The request is read after the claim (claim.go), then the lease renewed
\* once more; a job no longer its own answers ErrTerminal and is let go.
Transfer(r) ==
    LET j == wk[r].job IN
    /\ wk[r].pc = "Transfer"
    /\ conn[r] = "up"
    /\ IF st[j] = "RUNNING" /\ owner[j] = r
          THEN /\ expiry' = [expiry EXCEPT ![j] = dbnow + LeaseTTL]
               /\ wk' = [wk EXCEPT ![r] = [@ EXCEPT !.pc = "Running"]]
          ELSE /\ wk' = [wk EXCEPT ![r] = IdleWorker]
               /\ UNCHANGED expiry
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   dbnow, phase, conn, lst, inbox, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* The keeper's round for the running job (lease.go); a job no longer its
\* own (reaped) answers ErrTerminal and the worker lets it go.
Renew(r) ==
    LET j == wk[r].job IN
    /\ wk[r].pc = "Running"
    /\ conn[r] = "up"
    /\ IF st[j] = "RUNNING" /\ owner[j] = r
          THEN /\ expiry' = [expiry EXCEPT ![j] = dbnow + LeaseTTL]
               /\ UNCHANGED wk
          ELSE /\ wk' = [wk EXCEPT ![r] = IdleWorker]
               /\ UNCHANGED expiry
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   dbnow, phase, conn, lst, inbox, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* Defects only: the worker's notification as a step of its own, before
\* its end's commit (from Running) or after it (from Committed).
WorkerNotify(r) ==
    /\ \/ wk[r].pc = "Running" /\ Defect = "notify_before_commit"
       \/ wk[r].pc = "Committed"
    /\ inbox' = Notified(wk[r].job)
    /\ wk' = [wk EXCEPT ![r] = IF wk[r].pc = "Running"
                                  THEN [@ EXCEPT !.pc = "Notified"]
                                  ELSE IdleWorker]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

-----------------------------------------------------------------------------
(* The writer (write.go): Submit, Claim and the ends queue their writes,   *)
(* and the writer sends a batch of them as one transaction.  Nothing sees  *)
(* a write while it is queued, so the batch takes its writes from the      *)
(* callers: n of r's Submit callers and, if w, its worker's call (a claim  *)
(* when idle, else its end).                                               *)

\* A batch r's writer may send: the connection up (under read_then_write,
\* the depth read first: WriterRead), something in it, ids left for its
\* submits, and a claim only when told of work (workChannel) or with a
\* submit (a claim that finds nothing changes nothing).
Batch(r, n, w) ==
    /\ phase[r] = "serving"
    /\ conn[r] = "up"
    /\ wr[r].pc = IF Defect = "read_then_write" THEN "Read" ELSE "Idle"
    /\ (n > 0 \/ w)
    /\ w => (\/ wk[r].pc \in {"Idle", "Retry", "Notified"}
             \/ (wk[r].pc = "Running" /\ Defect # "notify_before_commit"))
    /\ n <= Cardinality(Unused)
    /\ (w /\ wk[r].pc = "Idle")
          => (n > 0 \/ \E j \in table : st[j] = "PENDING")

\* The end the batch carries, or NoJob.
EndOf(r, w) == IF w /\ wk[r].pc # "Idle" THEN wk[r].job ELSE NoJob

\* The live jobs of pool p once the batch's end of e is done (ends).
PoolLive(p, e, ends) == Cardinality({i \in p : st[i] \in Live /\ ~(ends /\ i = e)})

\* The keys of a batch's n submits, in queue order: NoKey or a key, no key
\* twice (the queue keeps a second Submit of a key for a later batch).
KeySeqs(n) ==
    {ks \in [1..n -> Keys \cup {NoKey}] :
        \A i, k \in 1..n : (i # k /\ ks[i] # NoKey) => ks[i] # ks[k]}

\* The rows that hold key k when the batch looks it up, under the ledger
\* row's lock and before its retention pass: at most one (KeyInv).
Held(k) == {j \in table : key[j] = k}

\* The keys some row holds.
HeldKeys == {k \in Keys : Held(k) # {}}

\* The keyed submits of ks whose key a row holds (their positions): each
\* is answered with that row's job, a replay that admits nothing.
Replayed(ks) == {i \in DOMAIN ks : ks[i] \in HeldKeys}

Holder(k) == CHOOSE j \in Held(k) : TRUE

\* The i-th of the submits ts passes its tenant's bound: the tenant's live
\* jobs and its earlier submits of the batch (but the replays rp) are
\* below it.
TenantPass(ts, rp, e, ends, i) ==
    \/ TenantMax = 0
    \/ ts[i] \notin Shares
    \/ PoolLive(ts[i], e, ends)
         + Cardinality({k \in (1..(i - 1)) \ rp : ts[k] = ts[i]}) < TenantMax

\* The submits of ts the batch admits (their positions): of those that are
\* no replay (rp) and passed their tenant's bound, the first MaxQueue - d,
\* against the depth d after its end, if it ends its job (read_then_write:
\* the depth read before; bound_once: all of them, if d < MaxQueue).
Admitted(r, ts, rp, e, ends) ==
    LET passed == {i \in (DOMAIN ts) \ rp : TenantPass(ts, rp, e, ends, i)}
        d == (IF Defect = "read_then_write" THEN wr[r].d ELSE depth)
                 - (IF ends THEN 1 ELSE 0)
    IN  IF Defect = "bound_once"
           THEN IF d < MaxQueue THEN passed ELSE {}
           ELSE {i \in passed : Cardinality({k \in passed : k <= i}) <= MaxQueue - d}

\* The ids of the admitted submits adm of ts: each tenant's next ones.
AdmittedIds(ts, adm) ==
    UNION {NewIds(p, Cardinality({i \in adm : ts[i] = p})) : p \in Pools}

Ordered(S) == CHOOSE q \in [1..Cardinality(S) -> S] : Range(q) = S

\* The key column once the admissions adm of ts and ks are inserted as the
\* ids new: the m-th admission of a tenant (in queue order) is the m-th of
\* its new ids (in a fixed order: ids are interchangeable) and holds its key.
KeysAfter(ts, ks, adm, new) ==
    IF \A i \in adm : ks[i] = NoKey THEN key
    ELSE [j \in Jobs |->
            IF j \notin new THEN key[j]
            ELSE LET p   == CHOOSE q \in Pools : j \in q
                     ids == Ordered(new \cap p)
                     m   == CHOOSE x \in DOMAIN ids : ids[x] = j
                     at  == {i \in adm : ts[i] = p}
                 IN  ks[CHOOSE i \in at :
                          Cardinality({x \in at : x <= i}) = m]]

\* The jobs the claim may take: a PENDING one (one the batch admits, new,
\* too), or none if there is none or no claim.
Claimable(r, w, new) ==
    IF ~(w /\ wk[r].pc = "Idle") THEN {NoJob}
    ELSE LET c == {j \in table : st[j] = "PENDING"} \cup new
         IN  IF c = {} THEN {NoJob} ELSE c

\* The batch's effect on the database, committed: the ledger row locked (a
\* seq reserved for its end e, the depth), the end if it takes effect
\* (ends: the state guard found the job live), the admissions of the jobs
\* new, holding their keys (the key column kn), the retention pass if it
\* admitted, the claim of job c.  retry_overwrites: a retried end writes
\* over a terminal row.
Applied(r, e, ends, new, kn, c) ==
    \E over \in {/\ Defect = "retry_overwrites"
                 /\ e # NoJob /\ wk[r].pc = "Retry"
                 /\ st[e] \in Terminal} :
    \E lru1 \in {IF ends THEN Append(lru, e) ELSE lru} :
    \E at1 \in {IF ends THEN [completedAt EXCEPT ![e] = dbnow]
                         ELSE completedAt} :
    \E kept \in {IF new # {} THEN Swept(lru1, at1) ELSE lru1} :
    \E gone \in {Range(lru1) \ Range(kept)} :
    \E st1 \in {[j \in Jobs |->
                    IF j = e /\ (ends \/ over) THEN "DONE"
                    ELSE IF j \in new THEN "PENDING" ELSE st[j]]} :
    /\ st' = IF c = NoJob THEN st1 ELSE [st1 EXCEPT ![c] = "RUNNING"]
    /\ table' = (table \ gone) \cup new
    /\ key' = kn
    /\ depth' = depth - (IF ends THEN 1 ELSE 0) + Cardinality(new)
    /\ lru' = kept
    /\ completedAt' = at1
    /\ outcome' = IF ends THEN [outcome EXCEPT ![e] = "DONE"] ELSE outcome
    /\ owner' = [j \in Jobs |->
                   IF j = c THEN r
                   ELSE IF j = e /\ ends THEN NoOwner ELSE owner[j]]
    /\ expiry' = IF c = NoJob THEN expiry
                 ELSE [expiry EXCEPT ![c] = dbnow + LeaseTTL]
    /\ started' = IF c = NoJob THEN started
                  ELSE [started EXCEPT ![c] = TRUE]
    /\ inbox' = IF ends /\ Defect \notin {"notify_before_commit",
                                          "notify_after_commit"}
                   THEN Notified(e) ELSE inbox

DbUnchanged ==
    UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                expiry, outcome, inbox>>

\* The batch (Batch(r, n, w)) commits, then its callers are answered
\* (nothing sees an answer before its caller, so in the same step): the
\* Submits it admitted with their ids, a keyed one whose key a row holds
\* with that row's id (a replay), the others with ErrQueueFull; the claim
\* with its job (or ErrNoWork); the end with nil, or ErrTerminal for a job
\* another end ended (a retried end that finds its job ended as it asked
\* takes that as its own).  (\E x \in {v} names a value computed once.)
Commit(r, n, w) ==
    /\ \E ts \in TenantSeqs(n) :
       \E ks \in KeySeqs(n) :
       \E rp \in {Replayed(ks)} :
       \E e \in {EndOf(r, w)} :
       \E ends \in {e # NoJob /\ st[e] \in Live} :
       \E adm \in {Admitted(r, ts, rp, e, ends)} :
       \E new \in {AdmittedIds(ts, adm)} :
       \E kn \in {KeysAfter(ts, ks, adm, new)} :
       \E c \in Claimable(r, w, new) :
          /\ Applied(r, e, ends, new, kn, c)
          /\ wk' = [wk EXCEPT ![r] =
                      IF ~w THEN @
                      ELSE IF c # NoJob
                         THEN [pc |-> "Transfer", job |-> c, lost |-> FALSE]
                      ELSE IF ends /\ Defect = "notify_after_commit"
                         THEN [@ EXCEPT !.pc = "Committed"]
                      ELSE IdleWorker]
          /\ acked' = acked \cup new
          /\ answers' =
                answers
                    \cup {[key |-> ks[i], job |-> Holder(ks[i])] : i \in rp}
                    \cup {[key |-> kn[j], job |-> j] :
                             j \in {x \in new : kn[x] # NoKey}}
    /\ wr' = [wr EXCEPT ![r] = IdleWriter]
    /\ UNCHANGED <<dbnow, phase, conn, lst, wpc, wjob, wout, crashes, drops,
                   failures>>

\* The batch rolled back (a server error), answered with errors: the
\* Submits and the claim get an error, and the worker gives up a job whose
\* end failed (no longer held, a reaper ends it once its lease lapses).
\* Tried again instead, whole or split into single writes (batches of
\* one), it changes nothing: a stuttering step.
Abort(r, n, w) ==
    /\ wk' = IF w THEN [wk EXCEPT ![r] = IdleWorker] ELSE wk
    /\ wr' = [wr EXCEPT ![r] = IdleWriter]
    /\ failures' = failures + 1
    /\ DbUnchanged
    /\ UNCHANGED <<dbnow, phase, conn, lst, wpc, wjob, wout, acked, answers,
                   crashes, drops>>

\* The connection failed with the batch sent: it committed or not.  The
\* Submits and the claim are answered with an error (a job claimed is held
\* by nobody); the end is tried again, the second time given up.
Lost(r, n, w) ==
    /\ \/ \E ts \in TenantSeqs(n) :
          \E ks \in KeySeqs(n) :
          \E rp \in {Replayed(ks)} :
          \E e \in {EndOf(r, w)} :
          \E ends \in {e # NoJob /\ st[e] \in Live} :
          \E adm \in {Admitted(r, ts, rp, e, ends)} :
          \E new \in {AdmittedIds(ts, adm)} :
          \E kn \in {KeysAfter(ts, ks, adm, new)} :
          \E c \in Claimable(r, w, new) :
             Applied(r, e, ends, new, kn, c)
       \/ DbUnchanged
    /\ conn' = [conn EXCEPT ![r] = "lost"]
    /\ wk' = [wk EXCEPT ![r] =
                IF w /\ @.pc \in {"Idle", "Retry"} THEN IdleWorker
                ELSE IF w THEN [@ EXCEPT !.pc = "Retry", !.lost = TRUE]
                ELSE IF @.pc \in {"Transfer", "Running"}
                   THEN [@ EXCEPT !.lost = TRUE]
                ELSE @]
    /\ wr' = [wr EXCEPT ![r] = IdleWriter]
    /\ failures' = failures + 1
    /\ UNCHANGED <<dbnow, phase, lst, wpc, wjob, wout, acked, answers, crashes,
                   drops>>

\* The writer connects again.
WriterReconnect(r) ==
    /\ conn[r] = "lost"
    /\ conn' = [conn EXCEPT ![r] = "up"]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, lst, inbox, wk, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* read_then_write only: the depth read in a statement of its own.
WriterRead(r) ==
    /\ Defect = "read_then_write"
    /\ phase[r] = "serving"
    /\ conn[r] = "up"
    /\ wr[r].pc = "Idle"
    /\ Submitters > 0 /\ Unused # {}
    /\ wr' = [wr EXCEPT ![r] = [pc |-> "Read", d |-> depth]]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, inbox, wk, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

-----------------------------------------------------------------------------
(* Ends outside the writer: the reaper, a restart.                         *)

\* The end of live job j as final, committed, in a transaction of its own
\* with its notification: state, completion time and order, the
\* decrement, the lease released.
EndCommit(j, final) ==
    /\ st' = [st EXCEPT ![j] = final]
    /\ outcome' = [outcome EXCEPT ![j] = final]
    /\ completedAt' = [completedAt EXCEPT ![j] = dbnow]
    /\ depth' = depth - 1
    /\ lru' = Append(lru, j)
    /\ owner' = [owner EXCEPT ![j] = NoOwner]
    /\ inbox' = Notified(j)

\* Any serving replica's reaper: a RUNNING job whose lease lapsed and that
\* no caller of its own holds ends FAILED ("worker lost").
Reap(r) ==
    /\ phase[r] = "serving"
    /\ conn[r] = "up"
    /\ \E j \in table :
          /\ st[j] = "RUNNING"
          /\ ~Holds(r, j)
          /\ (Defect # "reaper_ignores_lease") => (expiry[j] <= dbnow)
          /\ EndCommit(j, "FAILED")
    /\ UNCHANGED <<table, started, key, expiry, dbnow, phase, conn, lst, wk,
                   wr, wpc, wjob, wout, acked, answers, crashes, drops,
                   failures>>

-----------------------------------------------------------------------------
(* Waiters: register locally, read the row, block; woken by the listener.  *)

WaitRegister(w) ==
    /\ wpc[w] = "Idle"
    /\ phase[HomeOf(w)] = "serving"
    /\ \E j \in Jobs : wjob' = [wjob EXCEPT ![w] = j]
    /\ wpc' = [wpc EXCEPT ![w] = "Registered"]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, inbox, wk, wr, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* The read of the committed row, after the registration or again after a
\* reconnect (Reread): gone (ErrNotFound), terminal (return it), or live
\* (block).
WaitRead(w) ==
    LET j == wjob[w] IN
    /\ wpc[w] \in {"Registered", "Reread"}
    /\ IF j \notin table
          THEN /\ wpc' = [wpc EXCEPT ![w] = "Done"]
               /\ UNCHANGED wout
          ELSE IF st[j] \in Terminal
          THEN /\ wpc' = [wpc EXCEPT ![w] = "Done"]
               /\ wout' = [wout EXCEPT ![w] = "ok"]
          ELSE /\ wpc' = [wpc EXCEPT ![w] = "Blocked"]
               /\ UNCHANGED wout
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, inbox, wk, wr, wjob,
                   outcome, acked, answers, crashes, drops, failures>>

\* The listener reads notification j and wakes the local waiters blocked
\* on j, with the final snapshot it carries.
Deliver(r) ==
    /\ phase[r] = "serving"
    /\ \E j \in inbox[r] :
          /\ inbox' = [inbox EXCEPT ![r] = @ \ {j}]
          /\ wpc' = [w \in Waiters |->
                       IF HomeOf(w) = r /\ wpc[w] = "Blocked" /\ wjob[w] = j
                          THEN "Woken" ELSE wpc[w]]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, wk, wr, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

WaitReturn(w) ==
    /\ wpc[w] = "Woken"
    /\ wpc' = [wpc EXCEPT ![w] = "Done"]
    /\ wout' = [wout EXCEPT ![w] = "ok"]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, lst, inbox, wk, wr, wjob,
                   outcome, acked, answers, crashes, drops, failures>>

-----------------------------------------------------------------------------
(* The listener's connection, replica crashes and restarts, the clock.     *)

\* The connection drops: what it had not read is lost with it, and so is
\* every notification until it LISTENs again.
ListenerDrop(r) ==
    /\ drops < MaxDrops
    /\ lst[r] = "listening"
    /\ lst' = [lst EXCEPT ![r] = "lost"]
    /\ inbox' = [inbox EXCEPT ![r] = {}]
    /\ drops' = drops + 1
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, wk, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, failures>>

\* Reconnect, LISTEN again, then make every local waiter re-read its row
\* (no_reread: leave them blocked).
Reconnect(r) ==
    /\ lst[r] = "lost"
    /\ lst' = [lst EXCEPT ![r] = "listening"]
    /\ wpc' = IF Defect = "no_reread" THEN wpc
              ELSE [w \in Waiters |->
                      IF HomeOf(w) = r /\ wpc[w] = "Blocked" THEN "Reread"
                      ELSE wpc[w]]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, inbox, wk, wr, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* kill -9: the local waiters, the worker's call, the writer's queue and
\* the listener vanish; the database keeps everything.
Crash(r) ==
    /\ crashes < MaxCrashes
    /\ phase[r] = "serving"
    /\ phase' = [phase EXCEPT ![r] = "down"]
    /\ conn' = [conn EXCEPT ![r] = "up"]
    /\ lst' = [lst EXCEPT ![r] = "off"]
    /\ inbox' = [inbox EXCEPT ![r] = {}]
    /\ wk' = [wk EXCEPT ![r] = IdleWorker]
    /\ wr' = [wr EXCEPT ![r] = IdleWriter]
    /\ wpc' = [w \in Waiters |->
                 IF HomeOf(w) # r \/ wpc[w] = "Idle" THEN wpc[w] ELSE "Done"]
    \* A call cut off before its read named no job to anybody.
    /\ wjob' = [w \in Waiters |->
                  IF HomeOf(w) = r /\ wpc[w] = "Registered" THEN NoJob
                  ELSE wjob[w]]
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, wout, outcome, acked, answers, drops,
                   failures>>

\* The restarted replica fails its own RUNNING jobs, one transaction each,
\* with the notification (restart_fails_all: every RUNNING job).
RecoverFail(r) ==
    /\ phase[r] = "down"
    /\ \E j \in table :
          /\ st[j] = "RUNNING"
          /\ (Defect # "restart_fails_all") => (owner[j] = r)
          /\ EndCommit(j, "FAILED")
    /\ UNCHANGED <<table, started, key, expiry, dbnow, phase, conn, lst, wk,
                   wr, wpc, wjob, wout, acked, answers, crashes, drops,
                   failures>>

\* Open, once no RUNNING job is its own: LISTEN, then serve
\* (listen_after_serve: serve now, LISTEN in Listen).
Open(r) ==
    /\ phase[r] = "down"
    /\ \A j \in table : ~(st[j] = "RUNNING" /\ owner[j] = r)
    /\ phase' = [phase EXCEPT ![r] = "serving"]
    /\ lst' = [lst EXCEPT ![r] =
                 IF Defect = "listen_after_serve" THEN "off" ELSE "listening"]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, conn, inbox, wk, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* listen_after_serve only: the LISTEN, after the replica began serving.
Listen(r) ==
    /\ phase[r] = "serving"
    /\ lst[r] = "off"
    /\ lst' = [lst EXCEPT ![r] = "listening"]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   expiry, dbnow, phase, conn, inbox, wk, wr, wpc, wjob, wout,
                   outcome, acked, answers, crashes, drops, failures>>

\* A RUNNING job of a serving replica that nobody there holds (its claim's
\* answer or its end was lost): its lease runs out, unrenewed.
Orphan(j) ==
    /\ st[j] = "RUNNING"
    /\ phase[owner[j]] = "serving"
    /\ ~Holds(owner[j], j)
    /\ expiry[j] > dbnow

\* The database clock moves on (past MaxTime only until an orphan's lease
\* lapses); every keeper that reaches the database renews the leases of
\* the jobs its replica holds within the tick (lease.go: every Lease/3).
Tick ==
    /\ (dbnow < MaxTime \/ \E j \in table : Orphan(j))
    /\ dbnow' = dbnow + 1
    /\ expiry' = [j \in Jobs |->
                    IF Renewed(j) THEN dbnow + 1 + LeaseTTL ELSE expiry[j]]
    /\ UNCHANGED <<st, table, started, key, depth, lru, completedAt, owner,
                   phase, conn, lst, inbox, wk, wr, wpc, wjob, wout, outcome,
                   acked, answers, crashes, drops, failures>>

\* Every job submitted and ended, every waiter returned, every replica
\* serving: stutter.
Terminated ==
    /\ \A j \in Jobs : st[j] \in Terminal
    /\ \A w \in Waiters : wpc[w] = "Done"
    /\ \A r \in Replicas : phase[r] = "serving" /\ wk[r].pc = "Idle"
    /\ UNCHANGED vars

\* A batch of r's writer, committed or, MaxFailures times at most, failed.
Write(r) ==
    \E w \in BOOLEAN : \E n \in 0..Submitters :
        /\ Batch(r, n, w)
        /\ \/ Commit(r, n, w)
           \/ (failures < MaxFailures /\ (Abort(r, n, w) \/ Lost(r, n, w)))

OtherNext ==
    \/ \E r \in Replicas :
          \/ Transfer(r) \/ Renew(r) \/ WorkerNotify(r)
          \/ WriterReconnect(r) \/ WriterRead(r)
          \/ Reap(r) \/ Deliver(r)
          \/ ListenerDrop(r) \/ Reconnect(r)
          \/ Crash(r) \/ RecoverFail(r) \/ Open(r) \/ Listen(r)
    \/ \E w \in Waiters : WaitRegister(w) \/ WaitRead(w) \/ WaitReturn(w)
    \/ Tick
    \/ Terminated

Next == (\E r \in Replicas : Write(r)) \/ OtherNext

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants: the seed's five at the database, lost wakeups across        *)
(* replicas in a safety form, leases, and nothing acknowledged lost.       *)

TypeInv ==
    /\ st \in [Jobs -> States \cup {Absent}]
    /\ table \subseteq Jobs
    /\ key \in [Jobs -> Keys \cup {NoKey}]
    /\ answers \subseteq [key : Keys, job : Jobs]
    /\ depth \in Int
    /\ lru \in Seq(Jobs)
    /\ owner \in [Jobs -> Replicas \cup {NoOwner}]
    /\ dbnow \in 0..(MaxTime + LeaseTTL)
    /\ phase \in [Replicas -> {"serving", "down"}]
    /\ conn \in [Replicas -> {"up", "lost"}]
    /\ lst \in [Replicas -> {"listening", "lost", "off"}]
    /\ \A r \in Replicas : inbox[r] \subseteq Jobs
    /\ wpc \in [Waiters -> {"Idle", "Registered", "Blocked", "Reread", "Woken",
                           "Done"}]
    /\ wout \in [Waiters -> {"none", "ok"}]

\* (3) Admission is decided against the bound, in order within a batch,
\* across all replicas.
DepthBoundInv ==
    0 <= depth /\ depth <= MaxQueue

\* (3') The two-level bound (JobLedger.tla's TenantBoundInv): no tenant
\* over its bound and the ledger not over its own.
TenantBoundInv ==
    /\ TenantMax > 0 =>
          \A s \in Shares : Cardinality({i \in s : st[i] \in Live}) <= TenantMax
    /\ depth <= MaxQueue

\* (4) The ledger row's depth counts the live rows: one decrement per end,
\* whoever ends it (worker, reaper, restart).
DepthInv ==
    depth = Cardinality({j \in Jobs : st[j] \in Live})

\* (4) A committed terminal state never changes: a retried end whose job
\* another end ended is refused.
TerminalAbsorbingInv ==
    \A j \in Jobs : (outcome[j] # Absent) => (st[j] = outcome[j])

\* (5) Retention deletes terminal rows only, and its order holds each
\* terminal row once, in completion order.
NoEvictNonTerminalInv ==
    \A j \in Jobs : (st[j] \in Live) => (j \in table)

RetentionListInv ==
    /\ \A i, k \in DOMAIN lru : (i < k) =>
          (/\ lru[i] # lru[k]
           /\ completedAt[lru[i]] <= completedAt[lru[k]])
    /\ \A j \in table : (j \in Range(lru)) = (st[j] \in Terminal)

\* (2) No lost wakeup across replicas, as a safety property: a waiter
\* blocked on a job whose end is committed has its notification in flight
\* to its listener, or its listener is reconnecting (and will make it
\* re-read).  The liveness form is MCSharedLedger's WaitReturnsProp.
NoLostWakeupInv ==
    \A w \in Waiters :
        (wpc[w] = "Blocked" /\ st[wjob[w]] \in Terminal)
            => (wjob[w] \in inbox[HomeOf(w)] \/ lst[HomeOf(w)] = "lost")

\* (2, 1) A waiter is woken only with its job's committed terminal state,
\* and Wait returns nil only with one.
WakeCommittedInv ==
    /\ \A w \in Waiters : (wpc[w] = "Woken") => (st[wjob[w]] \in Terminal)
    /\ \A w \in Waiters : (wout[w] = "ok") => (st[wjob[w]] \in Terminal)

\* Leases: while a worker has a job under a lease that has not lapsed
\* (transferring its request or running it), the job is RUNNING and the
\* lease its own: no reaper and no other replica's restart ends it.
LeaseHeldInv ==
    \A r \in Replicas :
        LET j == wk[r].job IN
        (wk[r].pc \in {"Transfer", "Running"} /\ expiry[j] > dbnow)
            => (st[j] = "RUNNING" /\ owner[j] = r)

\* A job a live replica holds, while that replica has reached the database
\* since the claim, is never reaped: its keeper renews the lease from the
\* claim on, through the request's transfer.
HeldNotReapedInv ==
    \A r \in Replicas :
        LET j == wk[r].job IN
        (wk[r].pc \in {"Transfer", "Running"} /\ ~wk[r].lost)
            => (st[j] = "RUNNING" /\ owner[j] = r)

\* The lease rule: a claim, a renewal and the keeper's rounds set the
\* expiry after the database's now, so a job its worker holds (transferring
\* or running it, its replica having reached the database since the claim)
\* always has a lease that has not lapsed.  The action form is
\* LeaseFutureProp.
LeaseLiveInv ==
    \A r \in Replicas :
        LET j == wk[r].job IN
        (wk[r].pc \in {"Transfer", "Running"} /\ ~wk[r].lost)
            => (expiry[j] > dbnow)

\* Every expiry written is after the database's now (TLC: tla-checker does
\* not evaluate action properties).
LeaseFutureProp ==
    [][\A j \in Jobs : (expiry'[j] # expiry[j]) => (expiry'[j] > dbnow')]_vars

\* A RUNNING job has an owner, and only RUNNING jobs have one.
OwnedInv ==
    \A j \in Jobs : (owner[j] # NoOwner) = (st[j] = "RUNNING")

\* At most one row holds each key (the unique index; JobLedger.tla's
\* KeyInv): replicas racing one fresh key end with one job.
KeyInv ==
    \A i, j \in table : (i # j /\ key[i] # NoKey) => key[i] # key[j]

\* A keyed Submit is answered with the job that holds its own key: the one
\* it inserted, or on a replay the row that held the key (IdempotencyKeys'
\* AnswerKeyInv).
AnswerKeyInv ==
    \A a \in answers : key[a.job] = a.key

\* Nothing acknowledged is lost: every acknowledged job has its row, or
\* had it until retention deleted it once terminal; crashes lose none.
AckedInv ==
    \A j \in acked : j \in table \/ st[j] \in Terminal

=============================================================================
