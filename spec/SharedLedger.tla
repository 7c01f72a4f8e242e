----------------------------- MODULE SharedLedger -----------------------------
(***************************************************************************)
(* Replicas of the server sharing one ledger in a PostgreSQL database      *)
(* (package store/postgres; docs/scaling.md): what a replica keeps         *)
(* locally (waiters, a listener, a worker), what the database keeps, and   *)
(* how a wakeup crosses from one to another.                               *)
(*                                                                         *)
(* The database's transactions are atomic steps (READ COMMITTED, with      *)
(* every write that changes the depth locking the ledger row first, so     *)
(* they are one at a time):                                                *)
(*   SubmitTx   admission is one conditional update (depth < MaxQueue,     *)
(*              checked and incremented together), then the retention      *)
(*              pass and the insertion, then the acknowledgement           *)
(*              (write.go)                                                 *)
(*   Claim      a worker claims a PENDING job (FOR UPDATE SKIP LOCKED:     *)
(*              a job another worker claimed is RUNNING, so not offered)   *)
(*              and takes its lease: owner and expiry in database time     *)
(*              (claim.go)                                                 *)
(*   Renew      the owner's keeper moves its lease's expiry on (lease.go)  *)
(*   an end     the worker's Finish, the reaper's FAILED of another        *)
(*              replica's job whose lease lapsed (reap.go), a restarted    *)
(*              replica's FAILED of its own RUNNING jobs (restart.go): the *)
(*              state guard, the completion time and order, the            *)
(*              decrement, and pg_notify, delivered on commit to every     *)
(*              listener connected and listening then                      *)
(* A replica LISTENs before it serves.  A waiter registers locally, then   *)
(* reads the row, then blocks; the notification wakes the local waiters of *)
(* its job.  A listener's connection may drop (notifications sent while it *)
(* is down are lost, and those not yet read with it); on reconnecting it   *)
(* LISTENs again and every local waiter re-reads its job.  A replica may   *)
(* crash: its waiters, its worker's call and its listener vanish, the      *)
(* database keeps everything; on restart it fails its own RUNNING jobs     *)
(* (their owner is itself) and leaves every other replica's alone.         *)
(*                                                                         *)
(* Not modelled: SQL, TakeRequest (one UPDATE whose WHERE is the whole     *)
(* check), reads other than Wait's, idempotency keys, cancel, a waiter's   *)
(* deadline, the database's own failover.  The job state machine inside a  *)
(* process is JobTable.tla's subject.                                      *)
(*                                                                         *)
(* Defect puts back one defect; its configuration expects the invariant    *)
(* that names it to fail.  Self-contained, for tla-checker.                *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,          \* job ids, submitted in a fixed order
    Replicas,      \* server processes sharing the database
    Waiters,       \* callers of Wait, one call each, on the first replica
    MaxQueue,      \* Config.MaxQueue, for all replicas together
    MaxCompleted,  \* Config.MaxCompleted
    TTL,           \* Config.JobTTL, in ticks of the database clock
    LeaseTTL,      \* a lease's length, in ticks of the database clock
    MaxTime,       \* bound of the database clock
    MaxCrashes,    \* replica crashes at most
    MaxDrops,      \* listener connection drops at most
    Defect         \* "none", or the defect to put back (see Defects)

\* notify_before_commit: the worker's end sends its notification before
\* the commit.  notify_after_commit: after it, outside the transaction.
\* no_reread: a reconnected listener does not make the waiters re-read.
\* listen_after_serve: a restarted replica serves before it LISTENs.
\* read_then_write: admission reads the depth, then writes depth + 1 in a
\* second statement.  reaper_ignores_lease: the reaper fails any RUNNING
\* job, lease or not.  restart_fails_all: a restarted replica fails every
\* RUNNING job (right for one process, wrong for replicas).
Defects == {"none", "notify_before_commit", "notify_after_commit",
            "no_reread", "listen_after_serve", "read_then_write",
            "reaper_ignores_lease", "restart_fails_all"}

ASSUME
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat \ {0}
    /\ TTL \in Nat \ {0}
    /\ LeaseTTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ MaxCrashes \in Nat
    /\ MaxDrops \in Nat
    /\ Defect \in Defects

Absent   == "ABSENT"
NoJob    == "nojob"
NoOwner  == "noowner"
NoTime   == -1
Live     == {"PENDING", "RUNNING"}
Terminal == {"DONE", "FAILED", "TIMEOUT"}
States   == Live \cup Terminal

\* Every waiter calls Wait on the first replica; the jobs run wherever a
\* worker claims them, so its wakeup crosses replicas.
Home == CHOOSE r \in Replicas : TRUE

VARIABLES
    \* the database (committed)
    st,           \* st[j]: Absent or the row's state (kept after eviction)
    table,        \* the rows: submitted, not deleted by retention
    started,      \* started[j]: a claim made it RUNNING
    depth,        \* the ledger row's depth
    lru,          \* terminal rows, in completion order
    completedAt,  \* completedAt[j], database time, or NoTime
    owner,        \* owner[j]: the replica holding j's lease, or NoOwner
    expiry,       \* expiry[j]: when that lease lapses (database time)
    dbnow,        \* the database clock
    \* each replica
    phase,        \* phase[r]: "serving", "down" (crashed, restarting)
    lst,          \* lst[r]: "listening", "lost" (reconnecting), "off"
    inbox,        \* inbox[r]: notifications delivered, not yet read
    wk,           \* wk[r]: its worker: [pc, job]
    sub,          \* sub[r]: its Submit in flight (read_then_write): [pc, job, d]
    wpc,          \* wpc[w]: "Idle", "Registered", "Blocked", "Reread",
                  \*   "Woken", "Done"
    wjob,         \* wjob[w]: the job w waits on
    wout,         \* wout[w]: what Wait returned: "none" or "ok"
    \* history, for the invariants only
    outcome,      \* the first terminal state of each job
    acked,        \* jobs whose Submit was acknowledged
    crashes,      \* crashes so far
    drops         \* listener drops so far

vars == <<st, table, started, depth, lru, completedAt, owner, expiry, dbnow,
          phase, lst, inbox, wk, sub, wpc, wjob, wout, outcome, acked,
          crashes, drops>>

Range(s) == {s[i] : i \in DOMAIN s}

IdleWorker == [pc |-> "Idle", job |-> NoJob]
IdleSubmit == [pc |-> "Idle", job |-> NoJob, d |-> 0]

-----------------------------------------------------------------------------
(* Retention, run by SubmitTx in its transaction.                          *)

Expired(j) == completedAt[j] + TTL <= dbnow

ExpiredPrefix ==
    CHOOSE n \in 0..Len(lru) :
        /\ \A i \in 1..n : Expired(lru[i])
        /\ (n < Len(lru)) => ~Expired(lru[n + 1])

Swept ==
    LET afterTTL == SubSeq(lru, ExpiredPrefix + 1, Len(lru))
        extra    == IF Len(afterTTL) > MaxCompleted
                        THEN Len(afterTTL) - MaxCompleted ELSE 0
    IN  SubSeq(afterTTL, extra + 1, Len(afterTTL))

\* The next id to submit: ids are interchangeable, so a fixed order loses
\* no behaviour up to renaming.
Unclaimed == {j \in Jobs : st[j] = Absent /\ \A r \in Replicas : sub[r].job # j}
NextId == IF Unclaimed = {} THEN {} ELSE {CHOOSE j \in Unclaimed : TRUE}

-----------------------------------------------------------------------------
Init ==
    /\ st = [j \in Jobs |-> Absent]
    /\ table = {}
    /\ started = [j \in Jobs |-> FALSE]
    /\ depth = 0
    /\ lru = <<>>
    /\ completedAt = [j \in Jobs |-> NoTime]
    /\ owner = [j \in Jobs |-> NoOwner]
    /\ expiry = [j \in Jobs |-> 0]
    /\ dbnow = 0
    /\ phase = [r \in Replicas |-> "serving"]
    /\ lst = [r \in Replicas |-> "listening"]
    /\ inbox = [r \in Replicas |-> {}]
    /\ wk = [r \in Replicas |-> IdleWorker]
    /\ sub = [r \in Replicas |-> IdleSubmit]
    /\ wpc = [w \in Waiters |-> "Idle"]
    /\ wjob = [w \in Waiters |-> NoJob]
    /\ wout = [w \in Waiters |-> "none"]
    /\ outcome = [j \in Jobs |-> Absent]
    /\ acked = {}
    /\ crashes = 0
    /\ drops = 0

-----------------------------------------------------------------------------
(* Submit                                                                  *)

\* Evict, insert j PENDING and acknowledge it, in the admission's
\* transaction; d is the depth the admission decided on.
InsertAck(j, d) ==
    LET kept == Swept
        gone == Range(lru) \ Range(kept)
    IN
    /\ lru' = kept
    /\ table' = (table \ gone) \cup {j}
    /\ st' = [st EXCEPT ![j] = "PENDING"]
    /\ depth' = d + 1
    /\ acked' = acked \cup {j}

\* One transaction: UPDATE ledger SET depth = depth + 1 WHERE depth <
\* MaxQueue, the retention pass, the insertion; a refusal (ErrQueueFull)
\* changes nothing.  read_then_write: the read only (SubmitWrite follows).
SubmitTx(r) ==
    /\ phase[r] = "serving"
    /\ sub[r].pc = "Idle"
    /\ \E j \in NextId :
          IF Defect = "read_then_write"
             THEN /\ sub' = [sub EXCEPT ![r] = [pc |-> "Write", job |-> j,
                                                  d |-> depth]]
                  /\ UNCHANGED <<st, table, depth, lru, acked>>
             ELSE /\ depth < MaxQueue
                  /\ InsertAck(j, depth)
                  /\ UNCHANGED sub
    /\ UNCHANGED <<started, completedAt, owner, expiry, dbnow, phase, lst,
                   inbox, wk, wpc, wjob, wout, outcome, crashes, drops>>

\* read_then_write only: the write, decided on the depth read before.
SubmitWrite(r) ==
    /\ sub[r].pc = "Write"
    /\ IF sub[r].d < MaxQueue
          THEN InsertAck(sub[r].job, depth)
          ELSE UNCHANGED <<st, table, depth, lru, acked>>
    /\ sub' = [sub EXCEPT ![r] = IdleSubmit]
    /\ UNCHANGED <<started, completedAt, owner, expiry, dbnow, phase, lst,
                   inbox, wk, wpc, wjob, wout, outcome, crashes, drops>>

-----------------------------------------------------------------------------
(* Ends: one transaction, with the notification on commit.                 *)

\* What every listener that is listening has after the commit of j's end.
Notified(j) ==
    [r \in Replicas |-> IF lst[r] = "listening" THEN inbox[r] \cup {j}
                                                ELSE inbox[r]]

\* The end of live job j as final, committed: state, completion time and
\* order, the decrement, the lease released.  The notification is the
\* caller's (Notified, on commit, or a defect's own step).
EndCommit(j, final) ==
    /\ st' = [st EXCEPT ![j] = final]
    /\ outcome' = [outcome EXCEPT ![j] = final]
    /\ completedAt' = [completedAt EXCEPT ![j] = dbnow]
    /\ depth' = depth - 1
    /\ lru' = Append(lru, j)
    /\ owner' = [owner EXCEPT ![j] = NoOwner]

\* A worker claims a PENDING job and takes its lease (Start).
Claim(r) ==
    /\ phase[r] = "serving"
    /\ wk[r].pc = "Idle"
    /\ \E j \in table :
          /\ st[j] = "PENDING"
          /\ st' = [st EXCEPT ![j] = "RUNNING"]
          /\ started' = [started EXCEPT ![j] = TRUE]
          /\ owner' = [owner EXCEPT ![j] = r]
          /\ expiry' = [expiry EXCEPT ![j] = dbnow + LeaseTTL]
          /\ wk' = [wk EXCEPT ![r] = [pc |-> "Running", job |-> j]]
    /\ UNCHANGED <<table, depth, lru, completedAt, dbnow, phase, lst, inbox,
                   sub, wpc, wjob, wout, outcome, acked, crashes, drops>>

\* The owner renews its lease while the job runs; a job no longer its own
\* (reaped) answers ErrTerminal and the worker lets it go.
Renew(r) ==
    LET j == wk[r].job IN
    /\ wk[r].pc = "Running"
    /\ IF st[j] = "RUNNING" /\ owner[j] = r
          THEN /\ expiry' = [expiry EXCEPT ![j] = dbnow + LeaseTTL]
               /\ UNCHANGED wk
          ELSE /\ wk' = [wk EXCEPT ![r] = IdleWorker]
               /\ UNCHANGED expiry
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, dbnow,
                   phase, lst, inbox, sub, wpc, wjob, wout, outcome, acked,
                   crashes, drops>>

\* The worker's Finish: one transaction, the state guard (a job reaped
\* meanwhile answers ErrTerminal), the end, pg_notify on commit.
\* notify_before_commit: the notification went out in WorkerNotify first.
\* notify_after_commit: it goes out in WorkerNotify after.
WorkerEnd(r) ==
    LET j == wk[r].job IN
    /\ wk[r].pc \in {"Running", "Notified"}
    /\ (Defect = "notify_before_commit") => (wk[r].pc = "Notified")
    /\ IF st[j] \in Live
          THEN /\ EndCommit(j, "DONE")
               /\ IF Defect \in {"notify_before_commit", "notify_after_commit"}
                     THEN UNCHANGED inbox
                     ELSE inbox' = Notified(j)
               /\ wk' = [wk EXCEPT ![r] =
                           IF Defect = "notify_after_commit"
                              THEN [pc |-> "Committed", job |-> j]
                              ELSE IdleWorker]
          ELSE /\ wk' = [wk EXCEPT ![r] = IdleWorker]
               /\ UNCHANGED <<st, outcome, completedAt, depth, lru, owner,
                              inbox>>
    /\ UNCHANGED <<table, started, expiry, dbnow, phase, lst, sub, wpc, wjob,
                   wout, acked, crashes, drops>>

\* Defects only: the notification as a step of its own, before the commit
\* (from Running) or after it (from Committed).
WorkerNotify(r) ==
    /\ \/ wk[r].pc = "Running" /\ Defect = "notify_before_commit"
       \/ wk[r].pc = "Committed"
    /\ inbox' = Notified(wk[r].job)
    /\ wk' = [wk EXCEPT ![r] = IF wk[r].pc = "Running"
                                  THEN [wk[r] EXCEPT !.pc = "Notified"]
                                  ELSE IdleWorker]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, lst, sub, wpc, wjob, wout, outcome, acked,
                   crashes, drops>>

\* Any serving replica's reaper: another replica's RUNNING job whose lease
\* lapsed ends FAILED ("worker lost"), in one transaction with its
\* notification.  A replica never reaps its own jobs: it is alive.
Reap(r) ==
    /\ phase[r] = "serving"
    /\ \E j \in table :
          /\ st[j] = "RUNNING"
          /\ owner[j] # r
          /\ (Defect # "reaper_ignores_lease") => (expiry[j] <= dbnow)
          /\ EndCommit(j, "FAILED")
          /\ inbox' = Notified(j)
    /\ UNCHANGED <<table, started, expiry, dbnow, phase, lst, wk, sub, wpc,
                   wjob, wout, acked, crashes, drops>>

-----------------------------------------------------------------------------
(* Waiters: register locally, read the row, block; woken by the listener.  *)

WaitRegister(w) ==
    /\ wpc[w] = "Idle"
    /\ phase[Home] = "serving"
    /\ \E j \in Jobs : wjob' = [wjob EXCEPT ![w] = j]
    /\ wpc' = [wpc EXCEPT ![w] = "Registered"]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, lst, inbox, wk, sub, wout, outcome, acked,
                   crashes, drops>>

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
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, lst, inbox, wk, sub, wjob, outcome, acked,
                   crashes, drops>>

\* The listener reads notification j and wakes the local waiters blocked
\* on j, with the final snapshot it carries.
Deliver(r) ==
    /\ phase[r] = "serving"
    /\ \E j \in inbox[r] :
          /\ inbox' = [inbox EXCEPT ![r] = @ \ {j}]
          /\ wpc' = [w \in Waiters |->
                       IF Home = r /\ wpc[w] = "Blocked" /\ wjob[w] = j
                          THEN "Woken" ELSE wpc[w]]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, lst, wk, sub, wjob, wout, outcome, acked,
                   crashes, drops>>

WaitReturn(w) ==
    /\ wpc[w] = "Woken"
    /\ wpc' = [wpc EXCEPT ![w] = "Done"]
    /\ wout' = [wout EXCEPT ![w] = "ok"]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, lst, inbox, wk, sub, wjob, outcome, acked,
                   crashes, drops>>

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
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, wk, sub, wpc, wjob, wout, outcome, acked,
                   crashes>>

\* Reconnect, LISTEN again, then make every local waiter re-read its row
\* (no_reread: leave them blocked).
Reconnect(r) ==
    /\ lst[r] = "lost"
    /\ lst' = [lst EXCEPT ![r] = "listening"]
    /\ wpc' = IF Defect = "no_reread" \/ Home # r THEN wpc
              ELSE [w \in Waiters |->
                      IF wpc[w] = "Blocked" THEN "Reread" ELSE wpc[w]]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, inbox, wk, sub, wjob, wout, outcome, acked,
                   crashes, drops>>

\* kill -9: the local waiters, the worker's call, a Submit in flight and
\* the listener vanish; the database keeps everything.
Crash(r) ==
    /\ crashes < MaxCrashes
    /\ phase[r] = "serving"
    /\ phase' = [phase EXCEPT ![r] = "down"]
    /\ lst' = [lst EXCEPT ![r] = "off"]
    /\ inbox' = [inbox EXCEPT ![r] = {}]
    /\ wk' = [wk EXCEPT ![r] = IdleWorker]
    /\ sub' = [sub EXCEPT ![r] = IdleSubmit]
    /\ wpc' = IF Home # r THEN wpc
              ELSE [w \in Waiters |->
                      IF wpc[w] = "Idle" THEN "Idle" ELSE "Done"]
    \* A call cut off before its read named no job to anybody.
    /\ wjob' = IF Home # r THEN wjob
               ELSE [w \in Waiters |->
                       IF wpc[w] = "Registered" THEN NoJob ELSE wjob[w]]
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, wout, outcome, acked, drops>>

\* The restarted replica fails its own RUNNING jobs, one transaction each,
\* with the notification (restart_fails_all: every RUNNING job).
RecoverFail(r) ==
    /\ phase[r] = "down"
    /\ \E j \in table :
          /\ st[j] = "RUNNING"
          /\ (Defect # "restart_fails_all") => (owner[j] = r)
          /\ EndCommit(j, "FAILED")
          /\ inbox' = Notified(j)
    /\ UNCHANGED <<table, started, expiry, dbnow, phase, lst, wk, sub, wpc,
                   wjob, wout, acked, crashes, drops>>

\* Open, once no RUNNING job is its own: LISTEN, then serve
\* (listen_after_serve: serve now, LISTEN in Listen).
Open(r) ==
    /\ phase[r] = "down"
    /\ \A j \in table : ~(st[j] = "RUNNING" /\ owner[j] = r)
    /\ phase' = [phase EXCEPT ![r] = "serving"]
    /\ lst' = [lst EXCEPT ![r] =
                 IF Defect = "listen_after_serve" THEN "off" ELSE "listening"]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, inbox, wk, sub, wpc, wjob, wout, outcome, acked,
                   crashes, drops>>

\* listen_after_serve only: the LISTEN, after the replica began serving.
Listen(r) ==
    /\ phase[r] = "serving"
    /\ lst[r] = "off"
    /\ lst' = [lst EXCEPT ![r] = "listening"]
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   dbnow, phase, inbox, wk, sub, wpc, wjob, wout, outcome,
                   acked, crashes, drops>>

\* The database clock moves on.
Tick ==
    /\ dbnow < MaxTime
    /\ dbnow' = dbnow + 1
    /\ UNCHANGED <<st, table, started, depth, lru, completedAt, owner, expiry,
                   phase, lst, inbox, wk, sub, wpc, wjob, wout, outcome,
                   acked, crashes, drops>>

\* Every job submitted and ended, every waiter returned, every replica
\* serving: stutter.
Terminated ==
    /\ \A j \in Jobs : st[j] \in Terminal
    /\ \A w \in Waiters : wpc[w] = "Done"
    /\ \A r \in Replicas : phase[r] = "serving" /\ wk[r].pc = "Idle"
    /\ UNCHANGED vars

Next ==
    \/ \E r \in Replicas :
          \/ SubmitTx(r) \/ SubmitWrite(r)
          \/ Claim(r) \/ Renew(r) \/ WorkerEnd(r) \/ WorkerNotify(r)
          \/ Reap(r) \/ Deliver(r)
          \/ ListenerDrop(r) \/ Reconnect(r)
          \/ Crash(r) \/ RecoverFail(r) \/ Open(r) \/ Listen(r)
    \/ \E w \in Waiters : WaitRegister(w) \/ WaitRead(w) \/ WaitReturn(w)
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants: the seed's five at the database, lost wakeups across        *)
(* replicas in a safety form, leases, and nothing acknowledged lost.       *)

TypeInv ==
    /\ st \in [Jobs -> States \cup {Absent}]
    /\ table \subseteq Jobs
    /\ depth \in Int
    /\ lru \in Seq(Jobs)
    /\ owner \in [Jobs -> Replicas \cup {NoOwner}]
    /\ dbnow \in 0..MaxTime
    /\ phase \in [Replicas -> {"serving", "down"}]
    /\ lst \in [Replicas -> {"listening", "lost", "off"}]
    /\ \A r \in Replicas : inbox[r] \subseteq Jobs
    /\ wpc \in [Waiters -> {"Idle", "Registered", "Blocked", "Reread", "Woken",
                           "Done"}]
    /\ wout \in [Waiters -> {"none", "ok"}]

\* (3) Admission is one step against the bound, across all replicas.
DepthBoundInv ==
    0 <= depth /\ depth <= MaxQueue

\* (4) The ledger row's depth counts the live rows: one decrement per end,
\* whoever ends it (worker, reaper, restart).
DepthInv ==
    depth = Cardinality({j \in Jobs : st[j] \in Live})

\* (4) A committed terminal state never changes.
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
            => (wjob[w] \in inbox[Home] \/ lst[Home] = "lost")

\* (2, 1) A waiter is woken only with its job's committed terminal state,
\* and Wait returns nil only with one.
WakeCommittedInv ==
    /\ \A w \in Waiters : (wpc[w] = "Woken") => (st[wjob[w]] \in Terminal)
    /\ \A w \in Waiters : (wout[w] = "ok") => (st[wjob[w]] \in Terminal)

\* Leases: while a worker runs a job under a lease that has not lapsed, the
\* job is RUNNING and the lease its own: no reaper and no other replica's
\* restart ends it.
LeaseHeldInv ==
    \A r \in Replicas :
        LET j == wk[r].job IN
        (wk[r].pc = "Running" /\ expiry[j] > dbnow)
            => (st[j] = "RUNNING" /\ owner[j] = r)

\* A RUNNING job has an owner, and only RUNNING jobs have one.
OwnedInv ==
    \A j \in Jobs : (owner[j] # NoOwner) = (st[j] = "RUNNING")

\* Nothing acknowledged is lost: every acknowledged job has its row, or
\* had it until retention deleted it once terminal; crashes lose none.
AckedInv ==
    \A j \in acked : j \in table \/ st[j] \in Terminal

=============================================================================
