-- Schema 3: leases, so that several replicas can run the jobs of one
-- ledger and a replica that dies loses its jobs to the others.
--
-- owner is the name of the replica (Options.Replica) that took the job's
-- request or started it, kept after the job ends; lease_until is when its
-- lease lapses, in the store's time (Unix nanoseconds, like the other
-- times), NULL when the job holds no lease: PENDING and not taken, or
-- terminal. The owner renews the leases of its live jobs while it lives;
-- any replica's reaper ends FAILED a job whose lease lapsed. Jobs of a
-- schema before this one have no owner: a replica opening counts them as
-- its own.
ALTER TABLE jobs ADD COLUMN owner text;
ALTER TABLE jobs ADD COLUMN lease_until bigint;

-- The reaper and the renewal: the jobs that hold a lease.
CREATE INDEX jobs_lease ON jobs (lease_until) WHERE lease_until IS NOT NULL;
