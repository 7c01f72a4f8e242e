-- Schema 4: listing (ledger.Ledger.List).
--
-- n, the identity column of schema 1, is the job's admission ordinal: an
-- admission holds the ledger row's lock until it commits, so the n of
-- committed jobs grow in the order of admission, and an identity is never
-- reused. A page lists the jobs with n below its cursor, highest first,
-- by jobs_admission, or by jobs_task_admission under a task id filter.
CREATE UNIQUE INDEX jobs_admission ON jobs (n);
CREATE INDEX jobs_task_admission ON jobs (task_id, n);
