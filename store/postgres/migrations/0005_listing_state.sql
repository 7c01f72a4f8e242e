-- Schema 5: a page filtered by state (ledger.ListQuery.ByState).
--
-- Along jobs_admission a state filter is checked row by row, so a page of
-- a state that few retained jobs are in (PENDING or RUNNING among many
-- finished jobs) read every row down to the oldest. jobs_state_admission
-- holds each state's jobs by admission ordinal, so such a page reads its
-- own rows alone. A transition moves the job's entry in this index, in the
-- transaction that writes the new state.
CREATE INDEX jobs_state_admission ON jobs (state, n);
