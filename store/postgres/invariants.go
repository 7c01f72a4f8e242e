package postgres

import (
	"context"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"time"
)

// CheckInvariants reports every invariant of the contract the database
// violates, joined, or nil, named as jobtable's clauses and
// spec/JobTable.tla's. It reads the database in one REPEATABLE READ
// transaction, so it sees one commit of every replica; it is exact only
// while no call is in flight. It also checks the bound this Store admits
// under, MaxQueue (or the depth found at Open, if that was larger), and
// LeaseInv, this store's own: exactly the live jobs that are RUNNING or
// taken hold a lease, and a lease has an owner.
func (s *Store) CheckInvariants() error {
	if s.closed.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx, err := s.pool.BeginTx(ctx, pgxRepeatableRead)
	if err != nil {
		return fmt.Errorf("postgres: CheckInvariants: %w", err)
	}
	defer tx.Rollback(ctx)
	var (
		depth, live, badPayload, badOrder, terminalReq, pendingNoReq, badSeq, badLease int64
		unnumbered, sharedN, aboveN                                                    int64
	)
	err = tx.QueryRow(ctx, `SELECT
		(SELECT depth FROM ledger WHERE id = 1),
		(SELECT count(*) FROM jobs WHERE seq IS NULL),
		(SELECT count(*) FROM jobs WHERE (state >= 2) <> (seq IS NOT NULL)
			OR (state >= 2) <> (completed_at IS NOT NULL) OR (state = 0) <> (started_at IS NULL AND seq IS NULL)
			OR (state = 2) <> (result IS NOT NULL) OR (state IN (3, 4)) <> (error IS NOT NULL)),
		(SELECT count(*) FROM jobs WHERE started_at < created_at OR completed_at < coalesce(started_at, created_at)),
		(SELECT count(*) FROM jobs WHERE seq IS NOT NULL AND request IS NOT NULL),
		(SELECT count(*) FROM jobs WHERE state = 0 AND request IS NULL),
		(SELECT count(*) FROM jobs WHERE seq >= (SELECT next_seq FROM ledger WHERE id = 1)),
		(SELECT count(*) FROM jobs WHERE (seq IS NULL AND (state = 1 OR taken)) <> (lease_until IS NOT NULL)
			OR (lease_until IS NOT NULL AND owner IS NULL)),
		(SELECT count(*) FROM jobs WHERE n IS NULL OR n < 1),
		(SELECT count(*) - count(DISTINCT n) FROM jobs WHERE n IS NOT NULL),
		(SELECT count(*) FROM jobs WHERE n > coalesce(pg_sequence_last_value(pg_get_serial_sequence('jobs', 'n')::regclass), 0))`,
	).Scan(&depth, &live, &badPayload, &badOrder, &terminalReq, &pendingNoReq, &badSeq, &badLease,
		&unnumbered, &sharedN, &aboveN)
	if err != nil {
		return fmt.Errorf("postgres: CheckInvariants: %w", err)
	}
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(depth == live, "DepthInv: depth %d, %d jobs not terminal", depth, live)
	check(depth >= 0 && depth <= int64(s.maxDepth), "DepthBoundInv: depth %d outside [0, %d]", depth, s.maxDepth)
	check(badPayload == 0, "PayloadConsistencyInv: %d jobs whose state disagrees with their times, seq, result or error", badPayload)
	check(badOrder == 0, "TimestampOrderInv: %d jobs with times out of order", badOrder)
	check(terminalReq == 0, "TerminalReleasesRequestInv: %d terminal jobs hold a request", terminalReq)
	check(pendingNoReq == 0, "RequestOnceInv: %d PENDING jobs lost their request", pendingNoReq)
	check(badSeq == 0, "RetentionListInv: %d jobs with a seq not below the ledger's next_seq", badSeq)
	// The ordinals are drawn from the identity sequence of n in the
	// transaction that admits, under the ledger row's lock, so their order
	// is the order of admission; the database keeps no other record of that
	// order to compare them with. What it can show: each job has one, no two
	// share one, and none lies beyond what the sequence has handed out (the
	// sequence is read outside this snapshot, but it only grows).
	check(unnumbered == 0 && sharedN == 0 && aboveN == 0,
		"ListOrderInv: %d jobs without an ordinal, %d sharing one, %d beyond the sequence", unnumbered, sharedN, aboveN)
	check(badLease == 0, "LeaseInv: %d jobs hold a lease (with an owner) but are not RUNNING or taken, or the reverse", badLease)
	return errors.Join(errs...)
}

var pgxRepeatableRead = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
