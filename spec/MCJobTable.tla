---------------------------- MODULE MCJobTable ----------------------------
(***************************************************************************)
(* Model-checking harness for JobTable: symmetry and the liveness          *)
(* properties, both for TLC only.                                          *)
(***************************************************************************)
EXTENDS JobTable, TLC

\* The threads of one role are interchangeable: no action chooses among
\* them by anything but membership.  Job ids are not in it: JobTable
\* already hands them out in a fixed order (NextId), which breaks their
\* symmetry and takes its place.  Sound for the safety checks only; the
\* liveness configurations do not use it.
Symmetry ==
    Permutations(Submitters) \cup Permutations(Runners)
        \cup Permutations(Timers) \cup Permutations(Pollers)
        \cup Permutations(Waiters) \cup Permutations(Misusers)

\* Weak fairness per thread, on that thread's own steps: a thread whose next
\* step stays enabled takes it.  (Fairness of Next as a whole would let one
\* thread run forever while another starves.)  The clock is not fair: time
\* need not pass for anything to finish, and a waiter's context need not
\* end (WaitCancel is not a step of Waiter(w)).
FairSpec ==
    /\ Spec
    /\ \A s \in Submitters : WF_vars(Submitter(s))
    /\ \A r \in Runners : WF_vars(Runner(r) \/ Terminator(r))
    /\ \A t \in Timers : WF_vars(Terminator(t))
    /\ \A p \in Pollers : WF_vars(Poller(p))
    /\ \A w \in Waiters : WF_vars(Waiter(w))
    /\ \A m \in Misusers : WF_vars(Misuser(m))

\* Every admitted job reaches a terminal state.
JobsTerminateProp ==
    \A j \in Jobs : j \in admitted ~> state[j] \in Terminal

\* Every waiter that blocked returns.
WaitReturnsProp ==
    \A w \in Waiters : pc[w] = "WaitBlock" ~> pc[w] = "Done"

\* Every call returns and every worker loop ends: the whole run terminates.
\* A thread that repeats a step that changes nothing (a livelock) is no
\* deadlock, and only this property sees it.
TerminationProp ==
    <>(\A t \in Threads : pc[t] = "Done")

=============================================================================
