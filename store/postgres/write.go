package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The writes that change the depth or the completion sequence (Submit,
// the ends) are the writer's (writer.go): each batch locks the one ledger
// row first, so they are one at a time across every replica. Open's
// restart and the reaper lock it first too, each in a transaction of its
// own. Start and TakeRequest change one job row only and take no ledger
// lock; one and an end on the same job are ordered by the job row's lock.

// Submit admits a job carrying req and returns its id, or ErrQueueFull,
// once the job is committed; under an idempotency key (see ledger.Ledger)
// a retained job holding the key is answered (a replay, or ErrKeyConflict
// for another digest) with no slot taken, in the one batch, under the
// ledger row's lock. A task id, key or digest that is not valid UTF-8 or
// holds a NUL byte is refused with ledger.ErrUnstorable (PostgreSQL text
// cannot hold it). The batch that admits it notifies workChannel, so that
// every replica's claimers learn of the job (Work).
func (s *Store) Submit(ctx context.Context, sub ledger.Submission, req []byte) (string, bool, error) {
	if sub.Key == "" {
		sub.Digest = ""
	}
	return s.submit(ctx, sub, req)
}

// LookupKey returns the id and digest of the retained job that holds key,
// or ErrNotFound (at once for a key no job can hold). It reads committed
// rows and changes nothing.
func (s *Store) LookupKey(ctx context.Context, tenant, key string) (string, string, error) {
	if s.closed.Load() {
		return "", "", ledger.ErrClosed
	}
	if !storable(key) {
		return "", "", ledger.ErrNotFound // no job holds it (text.go)
	}
	var id, digest string
	if !storable(tenant) {
		return "", "", ledger.ErrNotFound
	}
	err := s.pool.QueryRow(ctx, `SELECT id, idem_digest FROM jobs WHERE tenant = $1 AND idem_key = $2`, tenant, key).Scan(&id, &digest)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", "", ledger.ErrNotFound
	case err != nil:
		return "", "", s.callErr(ctx, "looking up an idempotency key", err)
	}
	return id, digest, nil
}

// submit is Submit: a write of the writer's batches (writer.go).
func (s *Store) submit(ctx context.Context, sub ledger.Submission, req []byte) (string, bool, error) {
	key, digest, taskID := sub.Key, sub.Digest, sub.TaskID
	if s.closed.Load() {
		return "", false, ledger.ErrClosed
	}
	if !storable(taskID) || !storable(key) || !storable(digest) || !storable(sub.Tenant) {
		return "", false, ledger.ErrUnstorable
	}
	if req == nil {
		req = []byte{} // NULL means released
	}
	o := &op{kind: opSubmit, id: s.cfg.NewID(), taskID: taskID, key: key, digest: digest,
		tenant: sub.Tenant, bound: max(sub.TenantMaxQueue, 0), payload: bytes.Clone(req), now: s.now()}
	r := s.await(ctx, o)
	switch {
	case r.dup:
		// The id source repeated an id: the caller's bug, as in jobtable.
		panic(fmt.Sprintf("postgres: Config.NewID returned duplicate id %q", o.id))
	case errors.Is(r.err, ledger.ErrQueueFull), errors.Is(r.err, ledger.ErrTenantQueueFull), errors.Is(r.err, ledger.ErrKeyConflict):
		return "", false, r.err
	case r.err != nil:
		return "", false, s.callErr(ctx, "submitting a job", r.err)
	}
	return r.id, r.replayed, nil
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
			AND completed_at <= (SELECT coalesce($1, `+dbNow+`) - $2::bigint)`, now, d.Nanoseconds())
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
		WHERE id = $2 AND state = 0 AND `+scoped("5")+` RETURNING `+snapCols,
		s.now(), id, s.opts.Replica, s.opts.Lease.Nanoseconds(), scope(ctx)))
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
	return s.end(ctx, id, ledgertype.Done, bytes.Clone(res), nil)
}

// Fail ends a job that is not terminal FAILED with cause, stored as its
// message (made storable: each NUL byte and each run of invalid UTF-8 in
// it becomes U+FFFD, text.go); ErrTerminal with the job's snapshot if it
// already ended.
func (s *Store) Fail(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	msg := storableText(ledger.CauseText(cause))
	return s.end(ctx, id, ledgertype.Failed, nil, &msg)
}

// Timeout ends a job that is not terminal TIMEOUT with cause, stored as
// its message (made storable, as Fail's); ErrTerminal with the job's
// snapshot if it already ended.
func (s *Store) Timeout(ctx context.Context, id string, cause error) (ledger.Snapshot, error) {
	msg := storableText(ledger.CauseText(cause))
	return s.end(ctx, id, ledgertype.TimedOut, nil, &msg)
}

// end is a terminal transition, a write of the writer's batches
// (writer.go): the job's state guard (only a job with no seq, PENDING or
// RUNNING, ends), state, payload, completion time (never before its other
// times) and seq, its request and lease released; the depth decrement; and
// pg_notify with the job, which PostgreSQL delivers at the commit, never
// before it and never if it fails. An end whose outcome was unknown at a
// try and that is then refused reports the job's end as its own if the
// job ended as it asked.
func (s *Store) end(ctx context.Context, id string, state ledger.State, res []byte, msg *string) (ledger.Snapshot, error) {
	if s.closed.Load() {
		return ledger.Snapshot{}, ledger.ErrClosed
	}
	if !storable(id) {
		return ledger.Snapshot{}, ledger.ErrNotFound
	}
	r := s.await(ctx, &op{kind: opEnd, id: id, state: state, payload: res, msg: msg, now: s.now(), scope: scope(ctx)})
	s.endTried(id, r.err == nil) // held.go
	switch {
	case r.err != nil:
		return ledger.Snapshot{}, s.callErr(ctx, "ending job "+id, r.err)
	case r.ended:
		return r.snap, nil
	}
	snap, err := s.refused(ctx, id, ledger.ErrTerminal)
	if r.unknown && errors.Is(err, ledger.ErrTerminal) && endedAs(snap, state, msg) {
		return snap, nil // an earlier try committed
	}
	return snap, err
}

// endedAs reports whether snap is the end of a job in state with message
// msg (nil for Finish).
func endedAs(snap ledger.Snapshot, state ledger.State, msg *string) bool {
	if snap.State != state {
		return false
	}
	if msg == nil {
		return snap.Err == nil
	}
	return snap.Err != nil && snap.Err.Error() == *msg
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
