package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// The writes. Every write that changes the depth or the completion
// sequence (Submit, the ends, Open's restart) locks the one ledger row
// first, with the statement that reads it, so such writes are one at a
// time across every replica and the rows they change after it are read
// fresh (each statement of a READ COMMITTED transaction reads the latest
// commit). Start changes one job row only and takes no ledger lock; it and
// an end on the same job are ordered by the job row's lock. No write locks
// a job row before the ledger row, so no two writes deadlock.

// Submit admits a job carrying req and returns its id, or ErrQueueFull,
// once the job is committed. It evicts expired terminal jobs first. A
// task id that is not valid UTF-8 or holds a NUL byte is refused with
// ledger.ErrUnstorable (PostgreSQL text cannot hold it), as is such a key
// or digest of SubmitKeyed.
//
// Admission is one statement that checks and increments together: the
// UPDATE of the ledger row whose WHERE clause is the bound. The
// transaction notifies workChannel, delivered at its commit, so that
// every replica's claimers learn of the job (Work). Under READ
// COMMITTED a Submit blocked behind another's lock re-checks the clause on
// the row as the other committed it, so concurrent Submits on any
// replicas never admit more than MaxQueue.
func (s *Store) Submit(ctx context.Context, taskID string, req []byte) (string, error) {
	id, _, err := s.submit(ctx, "", "", taskID, req)
	return id, err
}

// SubmitKeyed is Submit under an idempotency key (see ledger.Ledger). The
// transaction locks the ledger row first, which every admission of every
// replica also takes, then looks the key up: a retained job holding it is
// answered (a replay, or ErrKeyConflict for another digest) with no slot
// taken; otherwise the job is admitted and inserted holding the key, all
// before the lock is released. As in jobtable, the key is looked up
// before the retention pass, so a replay of a job that pass would evict
// is ordered before it.
func (s *Store) SubmitKeyed(ctx context.Context, key, digest, taskID string, req []byte) (string, bool, error) {
	if key == "" {
		panic("postgres: SubmitKeyed with an empty key")
	}
	return s.submit(ctx, key, digest, taskID, req)
}

// LookupKey returns the id and digest of the retained job that holds key,
// or ErrNotFound (at once for a key no job can hold). It reads committed
// rows and changes nothing.
func (s *Store) LookupKey(ctx context.Context, key string) (string, string, error) {
	if s.closed.Load() {
		return "", "", ledger.ErrClosed
	}
	if !storable(key) {
		return "", "", ledger.ErrNotFound // no job holds it (text.go)
	}
	var id, digest string
	err := s.pool.QueryRow(ctx, `SELECT id, idem_digest FROM jobs WHERE idem_key = $1`, key).Scan(&id, &digest)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", "", ledger.ErrNotFound
	case err != nil:
		return "", "", s.callErr(ctx, "looking up an idempotency key", err)
	}
	return id, digest, nil
}

// submit is Submit, under key when key is not empty.
func (s *Store) submit(ctx context.Context, key, digest, taskID string, req []byte) (string, bool, error) {
	if s.closed.Load() {
		return "", false, ledger.ErrClosed
	}
	if !storable(taskID) || !storable(key) || !storable(digest) {
		return "", false, ledger.ErrUnstorable
	}
	id := s.cfg.NewID()
	if req == nil {
		req = []byte{} // NULL means released
	}
	req = bytes.Clone(req)
	now := s.now()
	var ttl, lru uint64
	dup, replayed := false, false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if key != "" {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM ledger WHERE id = 1 FOR UPDATE`); err != nil {
				return err
			}
			var held, heldDigest string
			err := tx.QueryRow(ctx, `SELECT id, idem_digest FROM jobs WHERE idem_key = $1`, key).Scan(&held, &heldDigest)
			switch {
			case err == nil && heldDigest != digest:
				return &refusal{err: ledger.ErrKeyConflict}
			case err == nil:
				id, replayed = held, true
				return nil
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		tag, err := tx.Exec(ctx, `UPDATE ledger SET depth = depth + 1 WHERE id = 1 AND depth < $1`, max(s.cfg.MaxQueue, 0))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &refusal{err: ledger.ErrQueueFull}
		}
		if ttl, lru, err = s.evict(ctx, tx, now); err != nil {
			return err
		}
		var k, d *string
		if key != "" {
			k, d = &key, &digest
		}
		tag, err = tx.Exec(ctx, `INSERT INTO jobs (id, task_id, state, request, created_at, idem_key, idem_digest)
			VALUES ($1, $2, 0, $3, coalesce($4, `+dbNow+`), $5, $6) ON CONFLICT (id) DO NOTHING`, id, taskID, req, now, k, d)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			dup = true
			return &refusal{err: errors.New("duplicate id")}
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, workChannel)
		return err
	})
	if dup {
		// The id source repeated an id: the caller's bug, as in jobtable.
		panic(fmt.Sprintf("postgres: Config.NewID returned duplicate id %q", id))
	}
	if r, ok := asRefusal(err); ok {
		return "", false, r.err
	}
	if err != nil {
		return "", false, s.callErr(ctx, "submitting a job", err)
	}
	s.evictedTTL.Add(ttl)
	s.evictedLRU.Add(lru)
	return id, replayed, nil
}

// evict runs one retention pass inside tx, which holds the ledger row's
// lock: first the terminal jobs completed at least JobTTL before now (the
// stored completion time against now, both from the one clock: Config.Now
// or the database's), then the least recently completed (lowest seq)
// beyond MaxCompleted. A job that is not terminal has no seq and is never
// a candidate. It returns how many each step evicted.
func (s *Store) evict(ctx context.Context, tx pgx.Tx, now *int64) (ttl, lru uint64, err error) {
	if d := s.cfg.JobTTL; d > 0 {
		tag, err := tx.Exec(ctx, `DELETE FROM jobs WHERE seq IS NOT NULL
			AND completed_at <= coalesce($1, `+dbNow+`) - $2::bigint`, now, d.Nanoseconds())
		if err != nil {
			return 0, 0, fmt.Errorf("TTL eviction: %w", err)
		}
		ttl = uint64(tag.RowsAffected())
	}
	if m := s.cfg.MaxCompleted; m > 0 {
		tag, err := tx.Exec(ctx, `DELETE FROM jobs WHERE seq IS NOT NULL AND seq <= (
			SELECT seq FROM jobs WHERE seq IS NOT NULL ORDER BY seq DESC OFFSET $1 LIMIT 1)`, m)
		if err != nil {
			return 0, 0, fmt.Errorf("LRU eviction: %w", err)
		}
		lru = uint64(tag.RowsAffected())
	}
	return ttl, lru, nil
}

// Start moves a PENDING job to RUNNING, under a lease of this replica
// (lease.go), or returns ErrNotPending with its snapshot (ErrNotFound for
// a job the store does not hold). A request
// already taken is released in the same statement (nobody will read it
// again: a RUNNING job never runs twice); one not taken stays until it is
// taken or the job ends.
func (s *Store) Start(ctx context.Context, id string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	if !storable(id) {
		return ledger.Snapshot{}, ledger.ErrNotFound
	}
	snap, err := scanSnapshot(s.pool.QueryRow(ctx, `UPDATE jobs SET state = 1,
			started_at = greatest(coalesce($1, `+dbNow+`), created_at),
			request = CASE WHEN taken THEN NULL ELSE request END,
			owner = $3, lease_until = coalesce($1, `+dbNow+`) + $4::bigint
		WHERE id = $2 AND state = 0 RETURNING `+snapCols, s.now(), id, s.opts.Replica, s.opts.Lease.Nanoseconds()))
	switch {
	case err == nil:
		s.hold(id)
		return snap, nil
	case errors.Is(err, pgx.ErrNoRows):
		return s.refused(ctx, id, ledger.ErrNotPending)
	default:
		return ledger.Snapshot{}, s.callErr(ctx, "starting job "+id, err)
	}
}

// refused is the answer to a transition that changed nothing: ErrNotFound
// for a job the store does not hold, else why with the job's snapshot.
func (s *Store) refused(ctx context.Context, id string, why error) (ledger.Snapshot, error) {
	snap, err := s.readSnapshot(ctx, id)
	if err != nil {
		return ledger.Snapshot{}, err
	}
	return snap, why
}

// Finish ends a job that is not terminal DONE with res; ErrTerminal with
// the job's snapshot if it already ended.
func (s *Store) Finish(ctx context.Context, id string, res []byte) (ledger.Snapshot, error) {
	if res == nil {
		res = []byte{}
	}
	return s.end(ctx, id, ledger.Done, bytes.Clone(res), nil)
}

// Fail ends a job that is not terminal FAILED with cause, stored as its
// message (made storable: each NUL byte and each run of invalid UTF-8 in
// it becomes U+FFFD, text.go); ErrTerminal with the job's snapshot if it
// already ended.
func (s *Store) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	msg := storableText(ledger.CauseText(cause))
	return s.end(ctx, id, ledger.Failed, nil, &msg)
}

// Timeout ends a job that is not terminal TIMEOUT with cause, stored as
// its message (made storable, as Fail's); ErrTerminal with the job's
// snapshot if it already ended.
func (s *Store) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	msg := storableText(ledger.CauseText(cause))
	return s.end(ctx, id, ledger.TimedOut, nil, &msg)
}

// end is a terminal transition, in one transaction: the ledger row's lock
// and the next completion seq; the job's state guard (only a job with no
// seq, PENDING or RUNNING, ends), state, payload, completion time (never
// before its other times) and seq, its request and lease released; the depth
// decrement; and pg_notify with the job's id, which PostgreSQL delivers at
// the commit, never before it and never if it fails.
func (s *Store) end(ctx context.Context, id string, state ledger.State, res []byte, msg *string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	if !storable(id) {
		return ledger.Snapshot{}, ledger.ErrNotFound
	}
	now := s.now()
	var snap ledger.Snapshot
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT next_seq FROM ledger WHERE id = 1 FOR UPDATE`).Scan(&seq); err != nil {
			return err
		}
		var err error
		snap, err = endJob(ctx, tx, id, state, res, msg, now, seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return &refusal{err: ledger.ErrTerminal}
		}
		if err != nil {
			return err
		}
		return endBookkeeping(ctx, tx, snap, seq)
	})
	_, refused := asRefusal(err)
	s.endTried(id, err == nil || refused) // held.go
	if r, ok := asRefusal(err); ok {
		return s.refused(ctx, id, r.err)
	}
	if err != nil {
		return ledger.Snapshot{}, s.callErr(ctx, "ending job "+id, err)
	}
	return snap, nil
}

// endJob makes job id terminal with seq, if it is not: pgx.ErrNoRows if it
// is, or is not held.
func endJob(ctx context.Context, tx pgx.Tx, id string, state ledger.State, res []byte, msg *string, now *int64, seq int64) (ledger.Snapshot, error) {
	return scanSnapshot(tx.QueryRow(ctx, `UPDATE jobs SET state = $1, result = $2, error = $3,
			completed_at = greatest(coalesce($4, `+dbNow+`), created_at, started_at),
			seq = $5, request = NULL, lease_until = NULL
		WHERE id = $6 AND seq IS NULL RETURNING `+snapCols, int16(state), res, msg, now, seq, id))
}

// endBookkeeping is the rest of an end, in its transaction after endJob:
// the depth decrement, the sequence's advance, and the notification of
// final, the job's snapshot as endJob left it with completion seq seq.
func endBookkeeping(ctx context.Context, tx pgx.Tx, final ledger.Snapshot, seq int64) error {
	if _, err := tx.Exec(ctx, `UPDATE ledger SET depth = depth - 1, next_seq = next_seq + 1 WHERE id = 1`); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, notifyPayload(final, seq))
	return err
}
