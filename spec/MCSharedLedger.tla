---------------------------- MODULE MCSharedLedger ----------------------------
(***************************************************************************)
(* Liveness of SharedLedger, for TLC only: under fairness, every waiter    *)
(* that called Wait returns (or is cut off by its replica's crash), across *)
(* replicas, dropped listeners, lapsed leases and restarts.                *)
(***************************************************************************)
EXTENDS SharedLedger, TLC

\* Weak fairness of each replica's steps, of each waiter's and of the
\* clock (a lease nobody renews lapses: a job claimed whose answer was
\* lost is reaped).  Not fair: crashes, listener drops, failed batches and
\* lease renewals (a worker need not renew for anything to finish).
Replica(r) ==
    \/ \E w \in BOOLEAN : \E n \in 0..Submitters :
          Batch(r, n, w) /\ Commit(r, n, w)
    \/ Transfer(r) \/ WorkerNotify(r) \/ WriterRead(r) \/ WriterReconnect(r)
    \/ Reap(r) \/ Deliver(r) \/ Reconnect(r) \/ RecoverFail(r) \/ Open(r)
    \/ Listen(r)

FairSpec ==
    /\ Spec
    /\ \A r \in Replicas : WF_vars(Replica(r))
    /\ \A w \in Waiters : WF_vars(WaitRegister(w) \/ WaitRead(w) \/ WaitReturn(w))
    /\ WF_vars(Tick)

\* Every waiter that called Wait returns: the liveness form of
\* NoLostWakeupInv.
WaitReturnsProp ==
    \A w \in Waiters :
        (wpc[w] \in {"Registered", "Blocked", "Reread", "Woken"})
            ~> (wpc[w] = "Done")

=============================================================================
