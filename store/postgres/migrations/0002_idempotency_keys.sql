-- Schema 2: idempotency keys (ledger.Ledger.SubmitKeyed).
--
-- idem_key is the key a job was submitted under, NULL for none, and
-- idem_digest the fingerprint of its request. A keyed submit locks the
-- ledger row before it looks the key up, so the check and the insertion
-- are one step across replicas; the unique index states "at most one
-- retained job per key" in the database itself, and a key leaves with its
-- row when retention deletes the job.
ALTER TABLE jobs ADD COLUMN idem_key text;
ALTER TABLE jobs ADD COLUMN idem_digest text;
CREATE UNIQUE INDEX jobs_idem_key ON jobs (idem_key) WHERE idem_key IS NOT NULL;
