-- Schema 3: listing (ledger.Ledger.List).
--
-- n is the job's admission ordinal: the writer gives each inserted job
-- meta's 'next_n' and stores the next one in the same transaction, so n
-- grows with each admission and is never reused, across restarts too. A
-- page lists the jobs with n below its cursor, highest first, by the index
-- jobs_admission (or jobs_task_admission under a task id filter). The jobs
-- of an older file get their rowid, which is their order of insertion
-- among the jobs the file still holds.
ALTER TABLE jobs ADD COLUMN n INTEGER;
UPDATE jobs SET n = rowid;
INSERT INTO meta (key, value) VALUES ('next_n', (SELECT coalesce(max(rowid), 0) + 1 FROM jobs));
CREATE UNIQUE INDEX jobs_admission ON jobs (n);
CREATE INDEX jobs_task_admission ON jobs (task_id, n);
