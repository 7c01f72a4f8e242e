--------------------------- MODULE IdempotencyKeys ---------------------------
(***************************************************************************)
(* Idempotency keys in package jobtable: Table.SubmitKeyed and the key     *)
(* index Table.keys, with the retention that frees a key.                 *)
(*                                                                         *)
(* SubmitKeyed holds the table mutex for its whole step: it looks the key  *)
(* up, and either answers with the job that holds it (a replay, taking no  *)
(* slot) or takes a slot of the depth, inserts the job and files it under  *)
(* the key.  Jobs end (Finish, Fail, Timeout: here one action, since only  *)
(* "terminal or not" matters to keys), and a terminal job may be evicted   *)
(* (by TTL or by the LRU bound, both under the table mutex in a Submit);  *)
(* eviction deletes the job's key from the index.  The job state machine,  *)
(* waiting and the payload are JobTable.tla's, and left out.               *)
(*                                                                         *)
(* A separate module rather than actions of JobTable.tla: tla-checker      *)
(* reads no EXTENDS of user modules, and adding keys there multiplies the  *)
(* state space of every configuration of JobTable.tla.                     *)
(*                                                                         *)
(* Defect puts back one defect: "check_then_act" releases the table mutex  *)
(* between the key's lookup and the insertion, as a SubmitKeyed built on   *)
(* LookupKey and Submit would; "key_not_evicted" evicts a job and leaves   *)
(* its key in the index.                                                   *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Submitters,   \* threads calling SubmitKeyed, once each
    Keys,         \* the idempotency keys they choose from
    Ids,          \* the job ids Config.NewID hands out, in no order
    MaxQueue,     \* Config.MaxQueue
    Defect        \* "none", "check_then_act" or "key_not_evicted"

NoThread == "nobody"
NoJob    == "nojob"
NoKey    == "nokey"

VARIABLES
    depth,      \* admitted jobs not yet terminal (the atomic depth)
    owner,      \* holder of the table mutex, or NoThread
    st,         \* st[i]: "ABSENT", "LIVE", "ENDED" or "EVICTED"
    keyOf,      \* keyOf[i]: the key job i was submitted under
    index,      \* index[k]: the job filed under k (Table.keys), or NoJob
    pc,         \* pc[s]: "Idle", "Locked", "Insert" or "Done"
    tkey,       \* tkey[s]: the key s submits under
    answer      \* answer[s]: NoJob, or the id its SubmitKeyed returned

vars == <<depth, owner, st, keyOf, index, pc, tkey, answer>>

Retained(i) == st[i] \in {"LIVE", "ENDED"}

Init ==
    /\ depth = 0
    /\ owner = NoThread
    /\ st = [i \in Ids |-> "ABSENT"]
    /\ keyOf = [i \in Ids |-> NoKey]
    /\ index = [k \in Keys |-> NoJob]
    /\ pc = [s \in Submitters |-> "Idle"]
    /\ tkey = [s \in Submitters |-> NoKey]
    /\ answer = [s \in Submitters |-> NoJob]

\* SubmitKeyed takes the table mutex, with the key it was given.
SubmitLock(s) ==
    /\ pc[s] = "Idle"
    /\ owner = NoThread
    /\ \E k \in Keys : tkey' = [tkey EXCEPT ![s] = k]
    /\ owner' = s
    /\ pc' = [pc EXCEPT ![s] = "Locked"]
    /\ UNCHANGED <<depth, st, keyOf, index, answer>>

\* The key's lookup: a replay answers the job filed under it and takes no
\* slot; a new key takes a slot (admit), or is refused (ErrQueueFull).
\* With check_then_act the mutex is released between this and SubmitInsert.
SubmitCheck(s) ==
    /\ pc[s] = "Locked"
    /\ owner = s
    /\ IF index[tkey[s]] # NoJob
         THEN /\ answer' = [answer EXCEPT ![s] = index[tkey[s]]]
              /\ owner' = NoThread
              /\ pc' = [pc EXCEPT ![s] = "Done"]
              /\ UNCHANGED depth
         ELSE IF depth >= MaxQueue
           THEN /\ owner' = NoThread
                /\ pc' = [pc EXCEPT ![s] = "Done"]
                /\ UNCHANGED <<depth, answer>>
           ELSE /\ depth' = depth + 1
                /\ owner' = IF Defect = "check_then_act" THEN NoThread ELSE s
                /\ pc' = [pc EXCEPT ![s] = "Insert"]
                /\ UNCHANGED answer
    /\ UNCHANGED <<st, keyOf, index, tkey>>

\* The insertion under a fresh id, and the key filed with it; the mutex is
\* released.
SubmitInsert(s) ==
    /\ pc[s] = "Insert"
    /\ IF Defect = "check_then_act" THEN owner = NoThread ELSE owner = s
    /\ \E i \in Ids :
         /\ st[i] = "ABSENT"
         /\ st' = [st EXCEPT ![i] = "LIVE"]
         /\ keyOf' = [keyOf EXCEPT ![i] = tkey[s]]
         /\ index' = [index EXCEPT ![tkey[s]] = i]
         /\ answer' = [answer EXCEPT ![s] = i]
    /\ owner' = NoThread
    /\ pc' = [pc EXCEPT ![s] = "Done"]
    /\ UNCHANGED <<depth, tkey>>

\* A live job ends (Finish, Fail or Timeout): the depth's one decrement.
End(i) ==
    /\ st[i] = "LIVE"
    /\ st' = [st EXCEPT ![i] = "ENDED"]
    /\ depth' = depth - 1
    /\ UNCHANGED <<owner, keyOf, index, pc, tkey, answer>>

\* Retention evicts a terminal job under the table mutex
\* (evictFrontLocked), and its key with it.
Evict(i) ==
    /\ st[i] = "ENDED"
    /\ owner = NoThread
    /\ st' = [st EXCEPT ![i] = "EVICTED"]
    /\ index' = IF Defect = "key_not_evicted" THEN index
                ELSE [index EXCEPT ![keyOf[i]] = NoJob]
    /\ UNCHANGED <<depth, owner, keyOf, pc, tkey, answer>>

\* Every submitter answered and every job evicted: nothing is left to do.
Terminated ==
    /\ \A s \in Submitters : pc[s] = "Done"
    /\ \A i \in Ids : st[i] \in {"ABSENT", "EVICTED"}
    /\ UNCHANGED vars

Next ==
    \/ \E s \in Submitters : SubmitLock(s) \/ SubmitCheck(s) \/ SubmitInsert(s)
    \/ \E i \in Ids : End(i) \/ Evict(i)
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
TypeInv ==
    /\ depth \in 0..MaxQueue
    /\ owner \in Submitters \cup {NoThread}
    /\ \A i \in Ids : st[i] \in {"ABSENT", "LIVE", "ENDED", "EVICTED"}
                      /\ keyOf[i] \in Keys \cup {NoKey}
    /\ \A k \in Keys : index[k] \in Ids \cup {NoJob}
    /\ \A s \in Submitters : pc[s] \in {"Idle", "Locked", "Insert", "Done"}

\* At most one retained job per key: the invariant of the HTTP API's keys.
KeyInv ==
    \A i, j \in Ids :
        (i # j /\ Retained(i) /\ Retained(j)) => keyOf[i] # keyOf[j]

\* The index names exactly the retained jobs, each under its own key
\* (jobtable's KeyInv clause of checkInvariants).
KeyIndexInv ==
    /\ \A k \in Keys : index[k] # NoJob =>
           Retained(index[k]) /\ keyOf[index[k]] = k
    /\ \A i \in Ids : Retained(i) => index[keyOf[i]] = i

\* A keyed submit is answered with the job holding its own key: the job
\* it inserted, or on a replay the one filed under the key it was given.
AnswerKeyInv ==
    \A s \in Submitters :
        (answer[s] # NoJob) => (keyOf[answer[s]] = tkey[s])

\* A replay takes no slot: the depth counts the live jobs and the
\* admissions between their check and their insertion, nothing else.
DepthInv ==
    depth = Cardinality({i \in Ids : st[i] = "LIVE"})
              + Cardinality({s \in Submitters : pc[s] = "Insert"})
=============================================================================
