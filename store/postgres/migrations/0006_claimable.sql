-- Schema 6: the claimable jobs, oldest first (Claim).
--
-- A claim takes the oldest PENDING jobs whose request nobody took. Along
-- jobs_state_admission it read and sorted every PENDING job to take a few,
-- so a claim cost grew with the backlog. jobs_claimable holds exactly the
-- claimable jobs in claim order, so a claim reads the rows it takes (and
-- those other claimers hold, which it skips).
CREATE INDEX jobs_claimable ON jobs (created_at, n)
	WHERE seq IS NULL AND state = 0 AND NOT taken AND request IS NOT NULL;
