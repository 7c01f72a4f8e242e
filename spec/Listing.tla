------------------------------- MODULE Listing -------------------------------
(***************************************************************************)
(* Listing jobs by pages (ledger.Ledger.List, GET /jobs): a walk that      *)
(* reads the retained jobs newest first, one page at a time, while jobs    *)
(* are admitted and evicted between its pages.                             *)
(*                                                                         *)
(* Every store gives each job an admission ordinal when it admits it       *)
(* (jobtable's admission order, SQLite's next_n, PostgreSQL's identity n), *)
(* so a job is its ordinal here: Submit admits ordinal nextOrd, Evict      *)
(* removes any retained job (retention evicts terminal jobs in completion  *)
(* order, which may be any admission order; the states that make a job    *)
(* terminal are JobTable.tla's, and left out).  A page is one atomic step, *)
(* as each store reads it under one lock or in one statement: the Limit    *)
(* highest ordinals held below the cursor, and the next cursor is the      *)
(* lowest of them.  The walk ends on a page shorter than Limit.            *)
(*                                                                         *)
(* Defect "offset" pages by position instead, as LIMIT/OFFSET does: the    *)
(* cursor counts the jobs listed so far, and a page is the jobs at those   *)
(* positions of the newest-first order at the moment it is read.  A job   *)
(* admitted between two pages shifts the order down and the next page     *)
(* repeats a job; one evicted above the cursor shifts it up and the next   *)
(* page skips one.                                                         *)
(*                                                                         *)
(* Filter "RUNNING" lists only the jobs RUNNING when their page is read    *)
(* (ListQuery.ByState), and lets held jobs move from PENDING to RUNNING to *)
(* DONE during the walk (Advance; with Filter "any" no job moves, as no    *)
(* state is looked at).  A job that starts or ends during the walk may be *)
(* listed or not, as its page finds it; "none skipped" is then every job   *)
(* that was retained and RUNNING for the whole walk.  States only move     *)
(* forward, so a job RUNNING at the walk's start and at its end was        *)
(* RUNNING throughout.                                                     *)
(*                                                                         *)
(* Defect "limit_then_filter" applies the filter after the limit, as a     *)
(* store that reads Limit rows below the cursor and keeps those that      *)
(* match would: a page with fewer than Limit matches ends the walk though *)
(* older matches remain (a store's page may be short, as jobtable's scan  *)
(* budget makes it, only with a cursor that goes on).                     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,        \* jobs admitted in all: ordinals 1..N
    Limit,    \* the page size
    Defect,   \* "none", "offset" or "limit_then_filter"
    Filter    \* "any", or "RUNNING": only RUNNING jobs are listed

Ords == 1..N

VARIABLES
    nextOrd,   \* the ordinal the next Submit gets
    st,        \* st[o]: "ABSENT", "HELD" or "EVICTED"
    js,        \* js[o]: the job's state, "PENDING", "RUNNING" or "DONE"
    pc,        \* the walker: "Idle", "Walking" or "Done"
    cursor,    \* the walk's cursor: 0 before the first page; an ordinal,
               \* or with Defect "offset" the count of jobs listed
    listed,    \* the jobs the walk listed, in order
    atStart    \* the jobs held, and matching the filter, when the walk
               \* started

vars == <<nextOrd, st, js, pc, cursor, listed, atStart>>

Held == {o \in Ords : st[o] = "HELD"}

\* The job o is one the filter lists, now.
Matches(o) == Filter = "any" \/ js[o] = Filter

\* The ordinals of a set, highest first: the i-th has i - 1 above it.
Desc(S) == [i \in 1..Cardinality(S) |->
                CHOOSE o \in S : Cardinality({x \in S : x > o}) = i - 1]

\* The elements of s at positions from + 1 .. from + k, those that exist.
Slice(s, from, k) ==
    LET n == IF Len(s) <= from THEN 0
             ELSE IF Len(s) - from < k THEN Len(s) - from ELSE k
    IN [i \in 1..n |-> s[from + i]]

Range(s) == {s[i] : i \in DOMAIN s}

Init ==
    /\ nextOrd = 1
    /\ st = [o \in Ords |-> "ABSENT"]
    /\ js = [o \in Ords |-> "PENDING"]
    /\ pc = "Idle"
    /\ cursor = 0
    /\ listed = <<>>
    /\ atStart = {}

\* Admission: the next ordinal, under the lock (or in the transaction)
\* that inserts the job.
Submit ==
    /\ nextOrd <= N
    /\ st' = [st EXCEPT ![nextOrd] = "HELD"]
    /\ nextOrd' = nextOrd + 1
    /\ UNCHANGED <<js, pc, cursor, listed, atStart>>

\* Retention evicts a retained job, whatever its ordinal.
Evict(o) ==
    /\ st[o] = "HELD"
    /\ st' = [st EXCEPT ![o] = "EVICTED"]
    /\ UNCHANGED <<nextOrd, js, pc, cursor, listed, atStart>>

\* A retained job moves on: it starts, or it ends.  Only a filter on the
\* state can tell, so without one no job moves.
Advance(o) ==
    /\ Filter # "any"
    /\ st[o] = "HELD"
    /\ js[o] # "DONE"
    /\ js' = [js EXCEPT ![o] = IF js[o] = "PENDING" THEN "RUNNING" ELSE "DONE"]
    /\ UNCHANGED <<nextOrd, st, pc, cursor, listed, atStart>>

StartWalk ==
    /\ pc = "Idle"
    /\ pc' = "Walking"
    /\ atStart' = {o \in Held : Matches(o)}
    /\ UNCHANGED <<nextOrd, st, js, cursor, listed>>

\* The jobs a page may list: below the cursor, or all of them first.
Below(c) == {o \in Held : c = 0 \/ o < c}

\* The jobs of S that the filter lists now.
Matching(S) == {o \in S : Matches(o)}

\* One page, read at one moment.
Page ==
    /\ pc = "Walking"
    /\ IF Defect = "limit_then_filter"
       THEN LET rows == Slice(Desc(Below(cursor)), 0, Limit)
                page == Desc(Matching(Range(rows)))
            IN /\ listed' = listed \o page
               /\ cursor' = IF rows = <<>> THEN cursor ELSE rows[Len(rows)]
               /\ pc' = IF Len(page) < Limit THEN "Done" ELSE "Walking"
       ELSE LET page == IF Defect = "offset"
                          THEN Slice(Desc(Matching(Held)), cursor, Limit)
                          ELSE Slice(Desc(Matching(Below(cursor))), 0, Limit)
            IN /\ listed' = listed \o page
               /\ cursor' = IF Defect = "offset" THEN cursor + Len(page)
                            ELSE IF page = <<>> THEN cursor ELSE page[Len(page)]
               /\ pc' = IF Len(page) < Limit THEN "Done" ELSE "Walking"
    /\ UNCHANGED <<nextOrd, st, js, atStart>>

\* The walk is over and nothing is left to admit: nothing more to do.
Terminated ==
    /\ pc = "Done"
    /\ nextOrd > N
    /\ UNCHANGED vars

Next ==
    \/ Submit
    \/ \E o \in Ords : Evict(o)
    \/ \E o \in Ords : Advance(o)
    \/ StartWalk
    \/ Page
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
TypeInv ==
    /\ nextOrd \in 1..(N + 1)
    /\ \A o \in Ords : st[o] \in {"ABSENT", "HELD", "EVICTED"}
    /\ \A o \in Ords : js[o] \in {"PENDING", "RUNNING", "DONE"}
    /\ pc \in {"Idle", "Walking", "Done"}
    /\ cursor \in 0..N
    /\ Range(listed) \subseteq Ords
    /\ atStart \subseteq Ords

\* No job is listed twice in one walk.
NoDuplicateInv ==
    \A i, j \in DOMAIN listed : i # j => listed[i] # listed[j]

\* Once the walk is over, it has listed every job held, and matching the
\* filter, from its start to its end (eviction is for ever and states only
\* move forward, so held and matching at both ends is throughout).
NoSkipInv ==
    pc = "Done" => \A o \in atStart : (st[o] = "HELD" /\ Matches(o)) => o \in Range(listed)

\* The filter holds: each job listed was RUNNING when its page was read,
\* so, as states only move forward, it is not PENDING now.
ListedMatchedInv ==
    Filter = "any" \/ \A o \in Range(listed) : js[o] # "PENDING"

\* Newest first: the walk lists ordinals in descending order.
NewestFirstInv ==
    \A i \in DOMAIN listed : i > 1 => listed[i - 1] > listed[i]
=============================================================================
