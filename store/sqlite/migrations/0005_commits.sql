-- Schema 5: the commit count (mark.go).
--
-- meta's 'commits' is the number of transactions the stores of this file
-- have committed: every batch and every Open adds one, in the transaction
-- it counts. The lock file keeps the count each commit left, so that Open
-- can tell a file that lost acknowledged commits.
INSERT INTO meta (key, value) VALUES ('commits', 0);
