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
        \cup Permutations(Waiters)

\* Weak fairness per thread, on that thread's own steps: a thread whose next
\* step stays enabled takes it.  (Fairness of Next as a whole would let one
\* thread run forever while another starves.)  The clock is not fair: time
\* need not pass for anything to finish.
FairSpec ==
    /\ Spec
    /\ \A s \in Submitters : WF_vars(Submitter(s))
    /\ \A r \in Runners : WF_vars(Runner(r) \/ Terminator(r))
    /\ \A t \in Timers : WF_vars(Terminator(t))
    /\ \A p \in Pollers : WF_vars(Poller(p))
    /\ \A w \in Waiters : WF_vars(Waiter(w))

\* Every admitted job reaches a terminal state.
JobsTerminateProp ==
    \A j \in Jobs : j \in admitted ~> state[j] \in Terminal

\* Every waiter that blocked returns.
WaitReturnsProp ==
    \A w \in Waiters : pc[w] = "WaitBlock" ~> pc[w] = "Done"

=============================================================================
