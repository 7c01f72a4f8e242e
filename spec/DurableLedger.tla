---------------------------- MODULE DurableLedger ----------------------------
(***************************************************************************)
(* The ledger over the SQLite store (package store/sqlite): what         *)
(* is durable, what a crash (kill -9) loses, and the order in which the    *)
(* single writer commits, acknowledges, publishes and wakes.               *)
(*                                                                         *)
(* One writer goroutine owns the database.  Submit, Start and the terminal *)
(* transitions (Finish, Fail, Timeout; cancel is one of them) are queued   *)
(* to it.  It takes every queued operation into one transaction, deciding *)
(* each against the transaction's view as it takes it (admission: depth <  *)
(* MaxQueue, checked and incremented by the one writer, so one step; Start *)
(* only from PENDING; a terminal transition only from PENDING or RUNNING,  *)
(* else ErrTerminal and nothing changes), then commits once (one fsync).   *)
(* Only after the commit returns does it acknowledge each caller, and only *)
(* then does it publish: wake the waiters of the jobs the batch made       *)
(* terminal and hand the admitted jobs to the runners.  A failed commit    *)
(* changes nothing and acknowledges nobody.  Readers read committed rows.  *)
(*                                                                         *)
(* Durable: db, the committed rows (state, completion time, the retention  *)
(* order, the depth row).  Volatile, lost at a crash: the queue, the open  *)
(* transaction, the batch and its pending acknowledgements, the waiters,   *)
(* the runners and the deadline timers.  A restart (Open) fails every      *)
(* RUNNING row ("interrupted by restart") in one transaction, checks the   *)
(* stored depth against the non-terminal rows, and hands the PENDING rows  *)
(* to the runners again, with their deadlines.                             *)
(*                                                                         *)
(* A write the store refuses (a failed commit: a full disk, an I/O error)  *)
(* is retried by its caller until it commits: a refused Start by the       *)
(* runner (or its job is ended TIMEOUT by its deadline), a refused end by  *)
(* the runner with the same outcome (or by the deadline first), a refused  *)
(* Timeout by the timer.  MaxCommitFailures failed batches, one after the  *)
(* other or apart, stand for a disk full for a while.                      *)
(*                                                                         *)
(* Not modelled: SQL, the fsync protocol and power loss.  A crash is the   *)
(* process killed; the file system keeps what a returned fsync wrote.      *)
(* The per-job state machine and its critical sections are JobTable.tla's *)
(* subject; here each operation is one step of the writer.                 *)
(*                                                                         *)
(* Idempotency keys: a keyed Submit is decided by the writer like any      *)
(* other, in the open transaction: the key is looked up first, and a row   *)
(* that holds it answers the Submit (a replay: nothing admitted, nothing   *)
(* evicted); otherwise the Submit is admitted or refused as any, and the   *)
(* admitted row holds the key from its insertion on.  A key is a column of *)
(* its job's row: it commits, rolls back and survives restarts with it,    *)
(* and leaves with it when retention deletes the row (KeyInv,              *)
(* AnswerKeyInv).  Keys are one set for all tenants here, as in            *)
(* JobLedger.tla (the store's are each tenant's own; the configurations    *)
(* with keys have one tenant).                                             *)
(*                                                                         *)
(* Tenants: a job belongs to the tenant whose share of Jobs holds it      *)
(* (Shares, a partition of some of the jobs, as in JobLedger.tla; a job in *)
(* none is of a tenant that has no bound).  A Submit is admitted only if   *)
(* its tenant's live rows are below TenantMax (0: no bound) and the depth  *)
(* below MaxQueue, both counted in the open transaction by the one writer  *)
(* as it takes the Submit, so check and count are one step                 *)
(* (TenantBoundInv, committed and in the open transaction).                *)
(*                                                                         *)
(* The constant Defect puts back one defect; its configuration expects the *)
(* invariant that names it to fail.                                        *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    Jobs,              \* task ids (model values), submitted in a fixed order
    Keys,              \* idempotency keys a Submit may be given
    Waiters,           \* threads calling Wait
    Pollers,           \* threads calling Snapshot/State/Result once
    MaxQueue,          \* Config.MaxQueue: admitted non-terminal jobs at most
    MaxCompleted,      \* Config.MaxCompleted: terminal jobs kept beyond TTL
    TTL,               \* Config.JobTTL, in clock ticks
    MaxTime,           \* bound of the abstract clock
    RunnerOutcomes,    \* terminal states a runner's own call may produce
    Deadlines,         \* TRUE: a job's deadline may fire and race its runner
    MaxCrashes,        \* crashes (kill -9) at most
    MaxCommitFailures, \* failed commits at most
    Shares,            \* the tenants, each as the set of its jobs (disjoint)
    TenantMax,         \* each tenant's bound on its live rows; 0 for none
    Defect             \* "none", or the defect to put back (see Defects)

\* wake_before_commit: waiters are woken as the writer takes the terminal
\* transition, before the commit.  read_uncommitted: readers read the open
\* transaction.  ack_before_commit: each caller is answered as its
\* operation is taken.  depth_not_restored: Open fails the RUNNING rows
\* and leaves the depth row as it was.  running_survives_restart: Open
\* leaves RUNNING rows RUNNING.  register_after_read: a waiter reads the
\* row before it registers.
Defects == {"none", "wake_before_commit", "read_uncommitted",
            "ack_before_commit", "depth_not_restored",
            "running_survives_restart", "register_after_read"}

ASSUME
    /\ MaxQueue \in Nat
    /\ MaxCompleted \in Nat \ {0}
    /\ TTL \in Nat \ {0}
    /\ MaxTime \in Nat
    /\ RunnerOutcomes \subseteq {"DONE", "FAILED", "TIMEOUT"}
    /\ RunnerOutcomes # {}
    /\ Deadlines \in BOOLEAN
    /\ MaxCrashes \in Nat
    /\ MaxCommitFailures \in Nat
    /\ Shares \subseteq SUBSET Jobs
    /\ \A s1, s2 \in Shares : s1 # s2 => s1 \cap s2 = {}
    /\ TenantMax \in Nat
    /\ Defect \in Defects

NoJob  == "nojob"   \* a waiter's job before it picks one
NoKey  == "nokey"   \* a Submit without an idempotency key
NoTime == -1        \* a completion time that is not set
Absent == "ABSENT"  \* no row: never inserted, or evicted

Terminal == {"DONE", "FAILED", "TIMEOUT"}
Live     == {"PENDING", "RUNNING"}
States   == Live \cup Terminal

\* What the writer answers.  ErrStore: the commit failed.  replay: a keyed
\* Submit answered with the job that holds its key.
Results == {"ok", "replay", "ErrQueueFull", "ErrTenantQueueFull",
            "ErrNotPending", "ErrTerminal", "ErrNotFound", "ErrStore"}

\* An operation queued to the writer, and who waits for its answer: the
\* client of a Submit, the job's runner, or the job's deadline timer; a
\* Submit's idempotency key, or NoKey.
Ops == [kind : {"Submit", "Start", "End"}, job : Jobs, to : States,
        by : {"client", "runner", "timer"}, key : Keys \cup {NoKey}]

NoOutcome == "none"  \* a runner that has not called its end

SubmitOp(j)    == [kind |-> "Submit", job |-> j, to |-> "PENDING",
                   by |-> "client", key |-> NoKey]
KeyedOp(j, k)  == [SubmitOp(j) EXCEPT !.key = k]
StartOp(j)     == [kind |-> "Start", job |-> j, to |-> "RUNNING",
                   by |-> "runner", key |-> NoKey]
EndOp(j, s, b) == [kind |-> "End", job |-> j, to |-> s, by |-> b,
                   key |-> NoKey]

VARIABLES
    \* durable
    db,          \* the committed rows (a Rows record)
    \* the environment
    now,         \* the wall clock (Config.Now); it survives a crash
    up,          \* the process is running (FALSE: killed, not yet Open)
    crashes,     \* crashes so far
    failures,    \* failed commits so far
    \* volatile: the writer
    queue,       \* operations queued to the writer (its channel)
    tx,          \* the open transaction's view of the rows (db if none)
    batch,       \* operations taken into tx, with their answers
    wphase,      \* "take", then "ack" once committed, then "publish"
    \* volatile: the callers
    claimed,     \* ids a client has submitted (never reused)
    rpc,         \* per job, its runner: "idle", "ready", "start", "run", "end",
                 \* "retry" (its end refused by the store, to be sent again)
    rend,        \* per job, the outcome its runner's end asks for (NoOutcome
                 \* until it calls it)
    tpc,         \* per job, its deadline timer: "off", "armed", "fired"
    wpc,         \* per waiter: "idle", "read", "register", "blocked",
                 \* "woken", "done"
    wjob,        \* the job a waiter waits on
    wview,       \* the terminal state a waiter was woken with
    ppc,         \* per poller: "idle", "done"
    \* history, for the invariants only
    ackedSubmit, \* ids whose Submit a client was told succeeded
    answers,     \* [key, job]: each keyed Submit's key and the job it was
                 \* answered with (admitted, or replayed)
    observed,    \* per job, the terminal states clients were shown
    outcome      \* per job, the first terminal state committed

vars == <<db, now, up, crashes, failures, queue, tx, batch, wphase, claimed,
          rpc, rend, tpc, wpc, wjob, wview, ppc, ackedSubmit, answers,
          observed, outcome>>

-----------------------------------------------------------------------------
(* The rows.  st: the job's row (Absent: none); at: its completion time;   *)
(* lru: the terminal rows in completion order (the retention order);       *)
(* depth: the depth row; started: the row has a start time (started_at);   *)
(* key: the idempotency key the job was inserted with (idem_key), NoKey    *)
(* for none.  gone (history, kept with the rows so that it commits and     *)
(* rolls back with them): the state a row had when retention deleted it;   *)
(* started and key are kept too once the row is deleted, but only a row    *)
(* holds its key: a key leaves with its job.                               *)

EmptyRows == [st |-> [j \in Jobs |-> Absent], at |-> [j \in Jobs |-> NoTime],
              lru |-> <<>>, depth |-> 0, gone |-> [j \in Jobs |-> Absent],
              started |-> [j \in Jobs |-> FALSE],
              key |-> [j \in Jobs |-> NoKey]]

Range(s) == {s[i] : i \in DOMAIN s}

\* The ids of the rows in the live states.
LiveRows(t) == {j \in Jobs : t.st[j] \in Live}

\* The share of j's tenant: its jobs, {} for a job of no bounded tenant.
Owner(j) == IF \E s \in Shares : j \in s THEN CHOOSE s \in Shares : j \in s ELSE {}

\* The live rows of the tenant whose share is s, in rows t.
TenantLive(t, s) == Cardinality({i \in s : t.st[i] \in Live})

\* j's tenant is below its bound in rows t.
TenantRoom(t, j) ==
    TenantMax = 0 \/ Owner(j) = {} \/ TenantLive(t, Owner(j)) < TenantMax

\* The tenants' pools of ids: each share, and the jobs of no bounded tenant.
Pools == {p \in Shares \cup {Jobs \ UNION Shares} : p # {}}

\* The terminal state of job j: its row's, or the one it had when evicted.
FinalOf(t, j) ==
    IF t.st[j] \in Terminal THEN t.st[j] ELSE t.gone[j]

\* Retention, run by an admitted Submit inside the transaction: first the
\* rows whose TTL has run out (a prefix of the completion order), then the
\* oldest beyond MaxCompleted.
Expired(t, j) == t.at[j] + TTL <= now

ExpiredPrefix(t) ==
    CHOOSE n \in 0..Len(t.lru) :
        /\ \A i \in 1..n : Expired(t, t.lru[i])
        /\ (n < Len(t.lru)) => ~Expired(t, t.lru[n + 1])

Evict(t) ==
    LET afterTTL == SubSeq(t.lru, ExpiredPrefix(t) + 1, Len(t.lru))
        extra    == IF Len(afterTTL) > MaxCompleted
                       THEN Len(afterTTL) - MaxCompleted ELSE 0
        kept     == SubSeq(afterTTL, extra + 1, Len(afterTTL))
        out      == Range(t.lru) \ Range(kept)
    IN  [t EXCEPT !.lru = kept,
                  !.st = [j \in Jobs |-> IF j \in out THEN Absent ELSE t.st[j]],
                  !.at = [j \in Jobs |-> IF j \in out THEN NoTime ELSE t.at[j]],
                  !.gone = [j \in Jobs |-> IF j \in out THEN t.st[j]
                                           ELSE t.gone[j]]]

\* The rows of t that hold key k: at most one (KeyInv).
KeyHolders(t, k) == {j \in Jobs : t.st[j] # Absent /\ t.key[j] = k}

\* The job a keyed Submit of k is answered with when a row holds k.
Holder(t, k) == CHOOSE j \in KeyHolders(t, k) : TRUE

\* The writer's answer to operation op against rows t: a keyed Submit
\* looks its key up first, in the same transaction, and a row that holds
\* it answers (a replay, which admits and evicts nothing).
Decide(t, op) ==
    LET s == t.st[op.job] IN
    CASE op.kind = "Submit" ->
            IF op.key # NoKey /\ KeyHolders(t, op.key) # {} THEN "replay"
            ELSE IF ~TenantRoom(t, op.job) THEN "ErrTenantQueueFull"
            ELSE IF t.depth < MaxQueue THEN "ok" ELSE "ErrQueueFull"
      [] s = Absent -> "ErrNotFound"
      [] op.kind = "Start" ->
            IF s = "PENDING" THEN "ok"
            ELSE IF s \in Terminal THEN "ErrTerminal" ELSE "ErrNotPending"
      [] OTHER ->
            IF s \in Terminal THEN "ErrTerminal" ELSE "ok"

\* Rows t after operation op, which Decide accepted: a Submit's row holds
\* its key from its insertion on.
Apply(t, op) ==
    LET j == op.job IN
    CASE op.kind = "Submit" ->
            [Evict(t) EXCEPT !.st[j] = "PENDING", !.depth = @ + 1,
                             !.key[j] = op.key]
      [] op.kind = "Start" ->
            [t EXCEPT !.st[j] = "RUNNING", !.started[j] = TRUE]
      [] OTHER ->
            [t EXCEPT !.st[j] = op.to, !.at[j] = now, !.lru = Append(@, j),
                      !.depth = @ - 1]

\* The rows a restart leaves: every RUNNING row FAILED, completed now, in
\* the retention order after the rows already there (among themselves in
\* any fixed order: they completed at the same time), and the depth row
\* set to the rows left live.
SeqOf(S) == CHOOSE s \in [1..Cardinality(S) -> S] : Range(s) = S

Recovered(t) ==
    LET running == {j \in Jobs : t.st[j] = "RUNNING"} IN
    IF Defect = "running_survives_restart" THEN t
    ELSE [t EXCEPT
            !.st = [j \in Jobs |-> IF j \in running THEN "FAILED" ELSE t.st[j]],
            !.at = [j \in Jobs |-> IF j \in running THEN now ELSE t.at[j]],
            !.lru = t.lru \o SeqOf(running),
            !.depth = IF Defect = "depth_not_restored" THEN t.depth
                      ELSE Cardinality(LiveRows(t) \ running)]

-----------------------------------------------------------------------------
(* Answering callers.  Each caller has at most one operation in flight.    *)

\* The entries of batch b that answer caller who ("runner", "timer") of
\* job j: at most one, since a caller waits for one answer at a time.
EntryOf(b, j, who) == {e \in b : e.op.job = j /\ e.op.by = who}

\* What a runner does after answer e: run the job after a Start that
\* succeeded; after ErrStore, send the same write again (a Start from
\* "ready", an end from "retry"); otherwise go idle.
RunnerNext(e) ==
    CASE e.res = "ErrStore" -> IF e.op.kind = "Start" THEN "ready" ELSE "retry"
      [] e.op.kind = "Start" /\ e.res = "ok" -> "run"
      [] OTHER -> "idle"

\* The callers' state after they receive the answers in b.
RunnerAnswered(b) ==
    [j \in Jobs |-> IF EntryOf(b, j, "runner") = {} THEN rpc[j]
                    ELSE RunnerNext(CHOOSE e \in EntryOf(b, j, "runner") : TRUE)]
\* A runner keeps the outcome of its end while it may send it again.
RendAnswered(b) ==
    [j \in Jobs |-> IF RunnerAnswered(b)[j] \in {"end", "retry"} THEN rend[j]
                    ELSE NoOutcome]
TimerAnswered(b) ==
    [j \in Jobs |-> IF EntryOf(b, j, "timer") = {} THEN tpc[j]
                    ELSE IF (CHOOSE e \in EntryOf(b, j, "timer") : TRUE).res
                                = "ErrStore"
                         THEN "armed" ELSE "off"]
\* The jobs b admitted, and the terminal states b made: what the callers
\* are told succeeded.
AdmittedBy(b) == {e.op.job : e \in {x \in b : x.op.kind = "Submit" /\ x.res = "ok"}}
ShownBy(b) ==
    [j \in Jobs |-> observed[j] \cup
                    {e.op.to : e \in {x \in b : x.op.kind = "End" /\ x.res = "ok"
                                                /\ x.op.job = j}}]

\* The keyed Submits b answered with a job: each key and its job.
KeyAnswers(b) ==
    {[key |-> e.op.key, job |-> e.ans] :
        e \in {x \in b : x.op.kind = "Submit" /\ x.op.key # NoKey
                         /\ x.res \in {"ok", "replay"}}}

\* Every caller of b gets its answer.
Reply(b) ==
    /\ rpc' = RunnerAnswered(b)
    /\ rend' = RendAnswered(b)
    /\ tpc' = TimerAnswered(b)
    /\ ackedSubmit' = ackedSubmit \cup AdmittedBy(b)
    /\ answers' = answers \cup KeyAnswers(b)
    /\ observed' = ShownBy(b)

\* Waking: every registered waiter of a job that b made terminal is woken
\* with that state (its done channel closed).  A waiter is registered from
\* its registration until it is woken or returns.
Registered(w) == wpc[w] \in {"read", "blocked"}
EndedBy(b, j) == {e \in b : e.op.kind = "End" /\ e.op.job = j /\ e.res = "ok"}
Woken(b) ==
    [w \in Waiters |-> IF Registered(w) /\ EndedBy(b, wjob[w]) # {}
                         THEN "woken" ELSE wpc[w]]
WokenWith(b) ==
    [w \in Waiters |-> IF Registered(w) /\ EndedBy(b, wjob[w]) # {}
                         THEN (CHOOSE e \in EndedBy(b, wjob[w]) : TRUE).op.to
                         ELSE wview[w]]

-----------------------------------------------------------------------------
Init ==
    /\ db = EmptyRows
    /\ now = 0
    /\ up = TRUE
    /\ crashes = 0
    /\ failures = 0
    /\ queue = {}
    /\ tx = EmptyRows
    /\ batch = {}
    /\ wphase = "take"
    /\ claimed = {}
    /\ rpc = [j \in Jobs |-> "idle"]
    /\ rend = [j \in Jobs |-> NoOutcome]
    /\ tpc = [j \in Jobs |-> "off"]
    /\ wpc = [w \in Waiters |-> "idle"]
    /\ wjob = [w \in Waiters |-> NoJob]
    /\ wview = [w \in Waiters |-> Absent]
    /\ ppc = [p \in Pollers |-> "idle"]
    /\ ackedSubmit = {}
    /\ answers = {}
    /\ observed = [j \in Jobs |-> {}]
    /\ outcome = [j \in Jobs |-> Absent]

-----------------------------------------------------------------------------
(* The callers: each queues its operation to the writer.                   *)

\* POST /jobs: the handler calls store.Submit (or SubmitKeyed, with an
\* idempotency key), which queues the operation and waits for its answer.
\* Ids are interchangeable within a tenant (drawn at random in Go), so
\* each tenant's are handed out in a fixed order; the caller is of any
\* tenant.  A replayed or refused Submit's id is never used.
NextId ==
    {CHOOSE j \in p \ claimed : TRUE : p \in {q \in Pools : q \ claimed # {}}}

Submit ==
    /\ up
    /\ \E j \in NextId, k \in Keys \cup {NoKey} :
          /\ claimed' = claimed \cup {j}
          /\ queue' = queue \cup {KeyedOp(j, k)}
    /\ UNCHANGED <<db, now, up, crashes, failures, tx, batch, wphase, rpc,
                   rend, tpc, wpc, wjob, wview, ppc, ackedSubmit, answers,
                   observed, outcome>>

\* A runner that was handed job j calls Start.
RunnerStart(j) ==
    /\ up
    /\ rpc[j] = "ready"
    /\ queue' = queue \cup {StartOp(j)}
    /\ rpc' = [rpc EXCEPT ![j] = "start"]
    /\ UNCHANGED <<db, now, up, crashes, failures, tx, batch, wphase, claimed,
                   rend, tpc, wpc, wjob, wview, ppc, ackedSubmit, answers,
                   observed, outcome>>

\* The runner ends job j: Finish, Fail or Timeout (RunnerOutcomes).
RunnerEnd(j) ==
    /\ up
    /\ rpc[j] = "run"
    /\ \E s \in RunnerOutcomes :
          /\ queue' = queue \cup {EndOp(j, s, "runner")}
          /\ rend' = [rend EXCEPT ![j] = s]
    /\ rpc' = [rpc EXCEPT ![j] = "end"]
    /\ UNCHANGED <<db, now, up, crashes, failures, tx, batch, wphase, claimed,
                   tpc, wpc, wjob, wview, ppc, ackedSubmit, answers, observed,
                   outcome>>

\* The store refused the runner's end (ErrStore): after a pause it sends
\* the same end again, until one commits or finds the job ended.
RunnerRetry(j) ==
    /\ up
    /\ rpc[j] = "retry"
    /\ queue' = queue \cup {EndOp(j, rend[j], "runner")}
    /\ rpc' = [rpc EXCEPT ![j] = "end"]
    /\ UNCHANGED <<db, now, up, crashes, failures, tx, batch, wphase, claimed,
                   rend, tpc, wpc, wjob, wview, ppc, ackedSubmit, answers,
                   observed, outcome>>

\* Job j's deadline, counted from admission, fires: Timeout, racing the
\* runner (and, after a restart, a deadline that passed while down).
DeadlineFires(j) ==
    /\ up
    /\ tpc[j] = "armed"
    /\ queue' = queue \cup {EndOp(j, "TIMEOUT", "timer")}
    /\ tpc' = [tpc EXCEPT ![j] = "fired"]
    /\ UNCHANGED <<db, now, up, crashes, failures, tx, batch, wphase, claimed,
                   rpc, rend, wpc, wjob, wview, ppc, ackedSubmit, answers,
                   observed, outcome>>

-----------------------------------------------------------------------------
(* The writer: take, commit, ack, publish.                                 *)

\* The rows a reader sees: committed ones (read_uncommitted: the open
\* transaction's).
ReadRows == IF Defect = "read_uncommitted" THEN tx ELSE db

\* The writer takes a queued operation into the transaction and decides it
\* against the transaction's view: admission, the state guard.  A refused
\* operation changes nothing.
\* ack_before_commit: the caller is answered here.
\* wake_before_commit: the waiters of a job made terminal are woken here.
\* A replay's answer is the job whose row holds the key.  (\E x \in {v}
\* names a value computed once.)
Take ==
    /\ up
    /\ wphase = "take"
    /\ \E op \in queue :
       \E res \in {Decide(tx, op)} :
       \E e \in {[op |-> op, res |-> res,
                  ans |-> IF res = "replay" THEN Holder(tx, op.key)
                          ELSE op.job]} :
          /\ queue' = queue \ {op}
          /\ tx' = IF e.res = "ok" THEN Apply(tx, op) ELSE tx
          /\ batch' = batch \cup {e}
          /\ IF Defect = "ack_before_commit"
                THEN Reply({e})
                ELSE UNCHANGED <<rpc, rend, tpc, ackedSubmit, answers,
                                 observed>>
          /\ IF Defect = "wake_before_commit"
                THEN /\ wpc' = Woken({e})
                     /\ wview' = WokenWith({e})
                ELSE UNCHANGED <<wpc, wview>>
    /\ UNCHANGED <<db, now, up, crashes, failures, wphase, claimed, wjob, ppc,
                   outcome>>

\* The writer has drained the queue: one COMMIT, one fsync.  The committed
\* rows are the transaction's.
Commit ==
    /\ up
    /\ wphase = "take"
    /\ batch # {}
    /\ queue = {}
    /\ db' = tx
    /\ outcome' = [j \in Jobs |-> IF outcome[j] = Absent THEN FinalOf(tx, j)
                                  ELSE outcome[j]]
    /\ wphase' = "ack"
    /\ UNCHANGED <<now, up, crashes, failures, queue, tx, batch, claimed, rpc,
                   rend, tpc, wpc, wjob, wview, ppc, ackedSubmit, answers,
                   observed>>

\* The COMMIT fails: the transaction is rolled back and every caller of the
\* batch gets ErrStore (a runner or timer retries; a client was not
\* admitted).
CommitFails ==
    /\ up
    /\ wphase = "take"
    /\ batch # {}
    /\ queue = {}
    /\ failures < MaxCommitFailures
    /\ failures' = failures + 1
    /\ tx' = db
    /\ batch' = {}
    /\ IF Defect = "ack_before_commit"
          THEN UNCHANGED <<rpc, rend, tpc, ackedSubmit, answers, observed>>
          ELSE Reply({[e EXCEPT !.res = "ErrStore"] : e \in batch})
    /\ UNCHANGED <<db, now, up, crashes, queue, wphase, claimed, wpc, wjob,
                   wview, ppc, outcome>>

\* After the commit returns: every caller of the batch gets its answer
\* (Submit's 202, a transition's result).
Ack ==
    /\ up
    /\ wphase = "ack"
    /\ IF Defect = "ack_before_commit"
          THEN UNCHANGED <<rpc, rend, tpc, ackedSubmit, answers, observed>>
          ELSE Reply(batch)
    /\ wphase' = "publish"
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, claimed,
                   wpc, wjob, wview, ppc, outcome>>

\* Then publish: wake the registered waiters of every job the batch made
\* terminal (close their channels) and stop those jobs' timers; hand every
\* admitted job to the runners and arm its deadline.
Publish ==
    /\ up
    /\ wphase = "publish"
    /\ wpc' = Woken(batch)
    /\ wview' = WokenWith(batch)
    /\ rpc' = [j \in Jobs |-> IF j \in AdmittedBy(batch) THEN "ready" ELSE rpc[j]]
    /\ UNCHANGED rend
    /\ tpc' = [j \in Jobs |->
                 IF j \in AdmittedBy(batch) /\ Deadlines THEN "armed"
                 ELSE IF EndedBy(batch, j) # {} /\ tpc[j] = "armed" THEN "off"
                 ELSE tpc[j]]
    /\ batch' = {}
    /\ wphase' = "take"
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, claimed, wjob,
                   ppc, ackedSubmit, answers, observed, outcome>>

-----------------------------------------------------------------------------
(* Readers: they see committed rows only.                                  *)

\* Snapshot, State or Result of any job: one read of its committed row.
Poll(p) ==
    /\ up
    /\ ppc[p] = "idle"
    /\ \E j \in Jobs :
          observed' = IF ReadRows.st[j] \in Terminal
                         THEN [observed EXCEPT ![j] = @ \cup {ReadRows.st[j]}]
                         ELSE observed
    /\ ppc' = [ppc EXCEPT ![p] = "done"]
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wpc, wjob, wview, ackedSubmit,
                   answers, outcome>>

\* Wait(j), first step: register locally (the writer will wake it), then
\* read.  register_after_read: read first (WaitReadFirst), register after
\* (WaitRegisterLate).
WaitRegister(w) ==
    /\ up
    /\ wpc[w] = "idle"
    /\ Defect # "register_after_read"
    /\ \E j \in Jobs : wjob' = [wjob EXCEPT ![w] = j]
    /\ wpc' = [wpc EXCEPT ![w] = "read"]
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wview, ppc, ackedSubmit, answers,
                   observed, outcome>>

\* What a waiter does with the row it read for job j: none -> ErrNotFound;
\* terminal -> return it; live -> go on to next (block, or register).
ReadRow(w, j, next) ==
    LET s == ReadRows.st[j] IN
    /\ wpc' = [wpc EXCEPT ![w] = IF s \in Live THEN next ELSE "done"]
    /\ observed' = IF s \in Terminal
                     THEN [observed EXCEPT ![j] = @ \cup {s}]
                     ELSE observed

\* Wait, second step: read the committed row, then block if it is live.
WaitRead(w) ==
    /\ up
    /\ wpc[w] = "read"
    /\ ReadRow(w, wjob[w], "blocked")
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wjob, wview, ppc, ackedSubmit,
                   answers, outcome>>

\* register_after_read: Wait reads the row first and registers after.
WaitReadFirst(w) ==
    /\ up
    /\ wpc[w] = "idle"
    /\ Defect = "register_after_read"
    /\ \E j \in Jobs :
          /\ wjob' = [wjob EXCEPT ![w] = j]
          /\ ReadRow(w, j, "register")
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wview, ppc, ackedSubmit, answers,
                   outcome>>

\* register_after_read: register after the read, and block.
WaitRegisterLate(w) ==
    /\ up
    /\ wpc[w] = "register"
    /\ wpc' = [wpc EXCEPT ![w] = "blocked"]
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wjob, wview, ppc, ackedSubmit,
                   answers, observed, outcome>>

\* Woken: return the terminal state the writer published.
WaitReturn(w) ==
    /\ up
    /\ wpc[w] = "woken"
    /\ observed' = [observed EXCEPT ![wjob[w]] = @ \cup {wview[w]}]
    /\ wpc' = [wpc EXCEPT ![w] = "done"]
    /\ UNCHANGED <<db, now, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wjob, wview, ppc, ackedSubmit,
                   answers, outcome>>

-----------------------------------------------------------------------------
(* Crash and restart.                                                      *)

\* kill -9: everything not committed is gone: the queue, the open
\* transaction, answers not yet sent (their callers never learn the
\* outcome), waiters, runners, timers.  A waiter cut off is done.
Crash ==
    /\ up
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ up' = FALSE
    /\ queue' = {}
    /\ tx' = db
    /\ batch' = {}
    /\ wphase' = "take"
    /\ rpc' = [j \in Jobs |-> "idle"]
    /\ rend' = [j \in Jobs |-> NoOutcome]
    /\ tpc' = [j \in Jobs |-> "off"]
    /\ wpc' = [w \in Waiters |-> IF wpc[w] = "idle" THEN "idle" ELSE "done"]
    /\ UNCHANGED <<db, now, failures, claimed, wjob, wview, ppc, ackedSubmit,
                   answers, observed, outcome>>

\* Open: the stored depth must equal the live rows (else Open refuses to
\* start: no step); then, in one transaction, every RUNNING row ends
\* FAILED and the depth row is set; the PENDING rows go to the runners
\* again, with their deadlines still counted from admission.
Open ==
    /\ ~up
    /\ db.depth = Cardinality(LiveRows(db))
    /\ LET r == Recovered(db) IN
       /\ db' = r
       /\ tx' = r
       /\ outcome' = [j \in Jobs |-> IF outcome[j] = Absent THEN FinalOf(r, j)
                                     ELSE outcome[j]]
       /\ rpc' = [j \in Jobs |-> IF r.st[j] = "PENDING" THEN "ready" ELSE "idle"]
       /\ tpc' = [j \in Jobs |-> IF r.st[j] = "PENDING" /\ Deadlines
                                    THEN "armed" ELSE "off"]
    /\ up' = TRUE
    /\ UNCHANGED <<now, crashes, failures, queue, batch, wphase, claimed, rend,
                   wpc, wjob, wview, ppc, ackedSubmit, answers, observed>>

\* The clock moves on, up or down.
Tick ==
    /\ now < MaxTime
    /\ now' = now + 1
    /\ UNCHANGED <<db, up, crashes, failures, queue, tx, batch, wphase,
                   claimed, rpc, rend, tpc, wpc, wjob, wview, ppc, ackedSubmit,
                   answers, observed, outcome>>

\* Every call has returned and every admitted job has ended.  A live row
\* that nobody will end (no runner, no deadline) never gets here.
Quiescent ==
    /\ up
    /\ claimed = Jobs
    /\ LiveRows(db) = {}
    /\ queue = {}
    /\ batch = {}
    /\ \A j \in Jobs : rpc[j] = "idle" /\ tpc[j] = "off"
    /\ \A w \in Waiters : wpc[w] = "done"
    /\ \A p \in Pollers : ppc[p] = "done"

\* Stutter once quiescent, so that the end is not a deadlock.
Terminated ==
    /\ Quiescent
    /\ UNCHANGED vars

Waiter(w) ==
    \/ WaitRegister(w) \/ WaitRead(w) \/ WaitReadFirst(w)
    \/ WaitRegisterLate(w) \/ WaitReturn(w)

Writer == Take \/ Commit \/ CommitFails \/ Ack \/ Publish
Caller ==
    \/ Submit
    \/ \E j \in Jobs : (RunnerStart(j) \/ RunnerEnd(j) \/ RunnerRetry(j)
                        \/ DeadlineFires(j))
    \/ \E p \in Pollers : Poll(p)
    \/ \E w \in Waiters : Waiter(w)

Next ==
    \/ Writer
    \/ Caller
    \/ Crash
    \/ Open
    \/ Tick
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.                                                             *)

Rows == [st : [Jobs -> States \cup {Absent}],
         at : [Jobs -> {NoTime} \cup (0..MaxTime)],
         lru : Seq(Jobs),
         depth : Int,
         gone : [Jobs -> States \cup {Absent}],
         started : [Jobs -> BOOLEAN],
         key : [Jobs -> Keys \cup {NoKey}]]

TypeInv ==
    /\ db \in Rows
    /\ tx \in Rows
    /\ now \in 0..MaxTime
    /\ up \in BOOLEAN
    /\ crashes \in 0..MaxCrashes
    /\ failures \in 0..MaxCommitFailures
    /\ queue \subseteq Ops
    /\ batch \subseteq [op : Ops, res : Results, ans : Jobs]
    /\ wphase \in {"take", "ack", "publish"}
    /\ claimed \subseteq Jobs
    /\ rpc \in [Jobs -> {"idle", "ready", "start", "run", "end", "retry"}]
    /\ rend \in [Jobs -> RunnerOutcomes \cup {NoOutcome}]
    /\ tpc \in [Jobs -> {"off", "armed", "fired"}]
    /\ wpc \in [Waiters -> {"idle", "read", "register", "blocked", "woken",
                            "done"}]
    /\ wjob \in [Waiters -> Jobs \cup {NoJob}]
    /\ wview \in [Waiters -> Terminal \cup {Absent}]
    /\ ppc \in [Pollers -> {"idle", "done"}]
    /\ ackedSubmit \subseteq claimed
    /\ answers \subseteq [key : Keys, job : Jobs]
    /\ observed \in [Jobs -> SUBSET Terminal]
    /\ outcome \in [Jobs -> Terminal \cup {Absent}]

\* Nothing acknowledged is lost: a job whose Submit was acknowledged has a
\* committed row, or had one until retention deleted it.
AckedDurableInv ==
    \A j \in ackedSubmit : db.st[j] # Absent \/ db.gone[j] # Absent

\* No observed terminal state is undone: every terminal state a client was
\* shown (a transition's answer, a read, a wakeup) is the committed state
\* of the job, from the moment it is shown, across crashes and restarts,
\* until retention deletes the row (and it was that state then).
ObservedDurableInv ==
    \A j \in Jobs : \A s \in observed[j] : FinalOf(db, j) = s

\* The seed's contract 3 and 4 at every committed state, after a restart
\* too, and in the open transaction: the depth row counts the live rows.
DepthInv ==
    /\ db.depth = Cardinality(LiveRows(db))
    /\ tx.depth = Cardinality(LiveRows(tx))

\* The queue bound.
DepthBoundInv ==
    /\ 0 <= db.depth /\ db.depth <= MaxQueue
    /\ 0 <= tx.depth /\ tx.depth <= MaxQueue

\* The two-level bound (JobLedger.tla's TenantBoundInv), committed and in
\* the open transaction: no tenant over its bound and the ledger not over
\* its own.
TenantBoundInv ==
    \A t \in {db, tx} :
        /\ TenantMax > 0 => \A s \in Shares : TenantLive(t, s) <= TenantMax
        /\ t.depth <= MaxQueue

\* A committed terminal state is absorbing, across restarts, until the row
\* is deleted (history outcome).
TerminalAbsorbingInv ==
    \A j \in Jobs : (outcome[j] # Absent) => (FinalOf(db, j) = outcome[j])

\* Retention deletes terminal rows only.
NoEvictNonTerminalInv ==
    \A j \in Jobs : (/\ db.gone[j] \in Terminal \cup {Absent}
                    /\ tx.gone[j] \in Terminal \cup {Absent})

\* The retention order holds each terminal row once, in completion order.
RetentionListInv ==
    \A t \in {db, tx} :
        /\ \A i, k \in DOMAIN t.lru : (i < k) =>
              (/\ t.lru[i] # t.lru[k]
               /\ t.at[t.lru[i]] <= t.at[t.lru[k]])
        /\ Range(t.lru) = {j \in Jobs : t.st[j] \in Terminal}
        /\ \A j \in Jobs : (t.at[j] # NoTime) = (t.st[j] \in Terminal)

\* A waiter is woken only with a committed terminal state: the state its
\* job has in db.
WakeCommittedInv ==
    \A w \in Waiters : (wpc[w] = "woken") => (wview[w] = FinalOf(db, wjob[w]))

\* A waiter blocks only on a job with a committed row: what it read was
\* live and committed, and a live row stays until the waiter is woken.
WaitCommittedInv ==
    \A w \in Waiters :
        (wpc[w] = "blocked") =>
            (db.st[wjob[w]] # Absent \/ db.gone[wjob[w]] # Absent)

\* No lost wakeup: a waiter blocked on a job whose committed state is
\* terminal will be woken by the batch that committed it, not yet
\* published.
NoLostWakeupInv ==
    \A w \in Waiters :
        (wpc[w] = "blocked" /\ FinalOf(db, wjob[w]) \in Terminal) =>
            (wphase # "take" /\ EndedBy(batch, wjob[w]) # {})

\* A RUNNING row always has a runner of this process: right after a
\* restart no row is RUNNING, and none is left without a runner to end it
\* (a runner whose end the store refused sends it again).
RunningOwnedInv ==
    up => (\A j \in Jobs :
              (db.st[j] = "RUNNING") =>
                  (rpc[j] \in {"start", "run", "end", "retry"}))

\* A PENDING row always has a runner of this process about to start it
\* (one whose Start the store refused starts again), unless the batch that
\* admitted it is still being answered: every acknowledged job ends.
PendingOwnedInv ==
    up => (\A j \in Jobs :
              (db.st[j] = "PENDING") =>
                  (\/ rpc[j] \in {"ready", "start"}
                   \/ (wphase # "take" /\ j \in AdmittedBy(batch))))

\* The restart rule: a restart fails exactly the RUNNING rows and keeps the
\* PENDING ones.  No row goes back to PENDING once it has started, and a
\* row that never started ends only by its deadline (runners end what they
\* started; cancel is not modelled).  The action form is NoRequeueProp.
RestartRuleInv ==
    \A t \in {db, tx} : \A j \in Jobs :
        /\ (t.st[j] = "PENDING") => ~t.started[j]
        /\ (t.st[j] \in Terminal /\ ~t.started[j]) => (t.st[j] = "TIMEOUT")

\* Deadlines are kept, across restarts and refused writes: every live row
\* of a running process has its deadline armed (or firing), unless the
\* batch that admitted it is still being answered.  Deadlines are not
\* timed: a timer fires at any point after it is armed, so a deadline
\* counted from admission and one counted from the restart are the same
\* here.
DeadlineArmedInv ==
    (up /\ Deadlines) =>
        \A j \in Jobs :
            (db.st[j] \in Live) =>
                (\/ tpc[j] \in {"armed", "fired"}
                 \/ (wphase # "take" /\ j \in AdmittedBy(batch)))

\* At most one row holds each key, committed and in the open transaction
\* (the unique index on idem_key; JobLedger.tla's KeyInv), across
\* restarts: a key is a column of its job's row.
KeyInv ==
    \A t \in {db, tx} : \A i, j \in Jobs :
        (/\ i # j /\ t.st[i] # Absent /\ t.st[j] # Absent
         /\ t.key[i] # NoKey) => t.key[i] # t.key[j]

\* A keyed Submit is answered with the job that holds its own key: the one
\* it inserted, or on a replay the row that held the key (IdempotencyKeys'
\* AnswerKeyInv), and that job keeps the key, across restarts.
AnswerKeyInv ==
    \A a \in answers : db.key[a.job] = a.key

\* No row goes back from RUNNING to PENDING (TLC: tla-checker does not
\* evaluate action properties; RestartRuleInv is its state form).
NoRequeueProp ==
    [][\A j \in Jobs : (db.st[j] = "RUNNING") => (db'.st[j] # "PENDING")]_vars

=============================================================================
