---------------------------- MODULE MCJobTable ----------------------------
(***************************************************************************)
(* Model-checking harness for JobTable: symmetry and the liveness          *)
(* properties, both for TLC only.                                          *)
(***************************************************************************)
EXTENDS JobTable, TLC

\* Job ids and the threads of one role are interchangeable: no action
\* chooses among them by anything but membership.  Sound for the safety
\* checks only; the liveness configuration does not use it.
Symmetry ==
    Permutations(Jobs) \cup Permutations(Submitters) \cup Permutations(Runners)
        \cup Permutations(Timers) \cup Permutations(Pollers)
        \cup Permutations(Waiters)

\* Every thread's step is taken eventually while it stays enabled.
FairSpec == Spec /\ WF_vars(Next)

\* Every admitted job reaches a terminal state.
JobsTerminateProp ==
    \A j \in Jobs : j \in admitted ~> state[j] \in Terminal

\* Every waiter that parked returns.
WaitReturnsProp ==
    \A w \in Waiters : pc[w] = "WaitParked" ~> pc[w] = "Done"

=============================================================================
