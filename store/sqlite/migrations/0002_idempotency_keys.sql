-- Schema 2: idempotency keys (ledger.Ledger.SubmitKeyed).
--
-- idem_key is the key a job was submitted under, NULL for none, and
-- idem_digest the fingerprint of its request. The unique index makes "at
-- most one retained job per key" a property of the file: the writer checks
-- the key and inserts the job in one transaction, and a key leaves with its
-- row when retention deletes the job.
ALTER TABLE jobs ADD COLUMN idem_key TEXT;
ALTER TABLE jobs ADD COLUMN idem_digest TEXT;
CREATE UNIQUE INDEX jobs_idem_key ON jobs (idem_key) WHERE idem_key IS NOT NULL;
