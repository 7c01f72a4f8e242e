--------------------------- MODULE MCDurableLedger ---------------------------
(***************************************************************************)
(* Model-checking harness for DurableLedger: liveness, for TLC only.       *)
(***************************************************************************)
EXTENDS DurableLedger, TLC

\* Weak fairness of the writer, of Open, of each caller's own steps and of
\* an armed deadline (time passes): a step that stays enabled is taken.
\* Crashes, failed commits and the clock are not fair: none of them need
\* happen.
FairSpec ==
    /\ Spec
    /\ WF_vars(Writer)
    /\ WF_vars(Open)
    /\ WF_vars(Submit)
    /\ \A j \in Jobs : WF_vars(RunnerStart(j) \/ RunnerEnd(j) \/ RunnerRetry(j))
    /\ \A j \in Jobs : WF_vars(DeadlineFires(j))
    /\ \A p \in Pollers : WF_vars(Poll(p))
    /\ \A w \in Waiters : WF_vars(Waiter(w))

\* Every job whose Submit was acknowledged ends, across crashes: a restart
\* hands its PENDING row to a runner again, or fails its RUNNING row; a
\* write the store refused is sent again.
AckedJobsEndProp ==
    \A j \in Jobs : (j \in ackedSubmit) ~> (FinalOf(db, j) \in Terminal)

\* FairSpec without the runners: a runner may hang for good (never start,
\* never end, never retry).  Time passes (an armed deadline fires), and the
\* writer, Open and the other callers take their steps.
DeadlineFairSpec ==
    /\ Spec
    /\ WF_vars(Writer)
    /\ WF_vars(Open)
    /\ WF_vars(Submit)
    /\ \A j \in Jobs : WF_vars(DeadlineFires(j))
    /\ \A p \in Pollers : WF_vars(Poll(p))
    /\ \A w \in Waiters : WF_vars(Waiter(w))

\* Every acknowledged job ends by its deadline, whatever its runner does:
\* across restarts (Open arms the deadlines of the rows it keeps) and
\* refused writes (the timer sends its Timeout again).  Checked under
\* DeadlineFairSpec, with Deadlines.
DeadlineEndsProp ==
    \A j \in Jobs : (j \in ackedSubmit) ~> (FinalOf(db, j) \in Terminal)

\* Every waiter that blocked returns (or is cut off by a crash).
WaitReturnsProp ==
    \A w \in Waiters : (wpc[w] = "blocked") ~> (wpc[w] = "done")

\* The whole run ends: every call returned, every admitted job ended.
TerminationProp ==
    <>Quiescent

=============================================================================
