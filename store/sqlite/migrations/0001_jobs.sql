-- Schema 1: the jobs and the ledger's own counters.
--
-- meta holds one integer per key: 'schema_version' (the last migration
-- applied) and 'depth' (the admitted jobs not yet terminal, updated in every
-- transaction that changes it and checked against the jobs at Open).
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO meta (key, value) VALUES ('depth', 0);

-- One row per job the store holds. state is a ledger.State (0 PENDING,
-- 1 RUNNING, 2 DONE, 3 FAILED, 4 TIMEOUT). Times are Unix nanoseconds,
-- NULL until set. request is NULL once released (the job started after its
-- request was taken, or ended); a live job's request is never NULL while
-- PENDING. seq orders the terminal jobs by completion (retention evicts the
-- lowest first); it is NULL exactly while the job is not terminal.
CREATE TABLE jobs (
	id           TEXT NOT NULL UNIQUE,
	task_id      TEXT NOT NULL,
	state        INTEGER NOT NULL CHECK (state BETWEEN 0 AND 4),
	request      BLOB,
	result       BLOB,
	error        TEXT,
	created_at   INTEGER NOT NULL,
	started_at   INTEGER,
	completed_at INTEGER,
	seq          INTEGER
);

-- Retention: the terminal jobs in completion order, with the completion
-- time, so that TTL and LRU eviction read only the index. (seq is unique
-- among the terminal jobs: CheckInvariants checks it, RetentionListInv.)
CREATE INDEX jobs_retention ON jobs (seq, completed_at) WHERE seq IS NOT NULL;

-- The jobs not yet terminal, oldest first: the depth check, the restart's
-- failing of RUNNING jobs and Recovered read only these.
CREATE INDEX jobs_live ON jobs (created_at) WHERE seq IS NULL;
