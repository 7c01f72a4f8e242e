-- Schema 1: the jobs and the ledger's one row of counters.
--
-- ledger holds one row: depth (the admitted jobs not yet terminal) and
-- next_seq (the completion sequence the next job to end gets). Every write
-- that changes either locks this row first, so admissions, ends and
-- retention passes of every replica are one at a time.
CREATE TABLE ledger (
	id       integer PRIMARY KEY CHECK (id = 1),
	depth    bigint NOT NULL CHECK (depth >= 0),
	next_seq bigint NOT NULL
);

INSERT INTO ledger (id, depth, next_seq) VALUES (1, 0, 1);

-- One row per job the store holds. state is a ledger.State (0 PENDING,
-- 1 RUNNING, 2 DONE, 3 FAILED, 4 TIMEOUT). Times are Unix nanoseconds, NULL
-- until set. request is NULL once released (the job started after its
-- request was taken, or ended); taken says a TakeRequest handed it out. seq
-- orders the terminal jobs by completion, and is NULL exactly while the job
-- is not terminal. n is the order of admission.
CREATE TABLE jobs (
	id           text PRIMARY KEY,
	n            bigint GENERATED ALWAYS AS IDENTITY,
	task_id      text NOT NULL,
	state        smallint NOT NULL CHECK (state BETWEEN 0 AND 4),
	request      bytea,
	taken        boolean NOT NULL DEFAULT false,
	result       bytea,
	error        text,
	created_at   bigint NOT NULL,
	started_at   bigint,
	completed_at bigint,
	seq          bigint UNIQUE
);

-- The jobs not yet terminal, oldest first: the restart and Recovered.
CREATE INDEX jobs_live ON jobs (created_at, n) WHERE seq IS NULL;
-- Retention: the terminal jobs by completion time (TTL).
CREATE INDEX jobs_completed ON jobs (completed_at) WHERE seq IS NOT NULL;
