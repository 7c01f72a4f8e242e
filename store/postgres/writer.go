package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobledger/jobledger/ledger"
)

// The writer goroutine applies the writes that change the depth or the
// completion sequence (Submit, the ends) and the claims. It
// takes every write queued, up to maxBatchOps, and sends them as one
// pipelined batch: one round trip and one implicit transaction, so one
// lock of the ledger row, held only while the server runs the batch and
// flushes its commit, and one flush for all. Callers get their replies
// after the commit. A batch that fails is tried again (see runBatch).

const (
	maxBatchOps   = 256
	maxBatchBytes = 16 << 20
	// inlineRequest is the largest request a Claim's batch carries; a
	// larger one is read by its caller after the job is held (claim.go).
	inlineRequest = 1 << 20
	// maxGather bounds the wait for a batch's callers to come back with
	// their next writes, which is at most a quarter of the batch's time.
	maxGather = time.Millisecond
)

// runWriter is the writer goroutine: it runs batches until ctx ends, then
// answers what is queued with ErrClosed and closes s.writerDone.
func (s *Store) runWriter(ctx context.Context) {
	defer close(s.writerDone)
	for {
		select {
		case <-s.q.ready:
		case <-ctx.Done():
			answer(s.q.close(), reply{err: ledger.ErrClosed})
			return
		}
		for ctx.Err() == nil {
			ops := s.q.take(maxBatchOps, maxBatchBytes)
			if len(ops) == 0 {
				break
			}
			start := time.Now()
			s.runBatch(ctx, ops, false)
			s.q.gather(ctx, s.q.len()+len(ops), min(time.Since(start)/4, maxGather))
		}
	}
}

// runBatch applies ops, tries them again while they fail with a transient
// error, for at most Options.Lease, and answers each. A batch that fails
// on the server rolled back: it is tried again whole if the error is
// transient, else each write alone, so that one write the database refuses
// fails no other. A batch whose outcome is unknown (the connection failed
// after it was sent) may have committed: its ends are tried again (an end
// is refused on a terminal job, and end() tells its own commit from
// another's), its admissions and claims answered with the error. unknown
// says whether an earlier try of ops had an unknown outcome.
func (s *Store) runBatch(ctx context.Context, ops []*op, unknown bool) {
	first := time.Now()
	backoff := 10 * time.Millisecond
	for {
		live := ops[:0]
		for _, o := range ops {
			if err := o.ctx.Err(); err != nil {
				deliver(o, reply{err: err, unknown: unknown}, nil)
				continue
			}
			live = append(live, o)
		}
		ops = live
		if len(ops) == 0 {
			return
		}
		replies, err := s.apply(ctx, ops)
		if err == nil {
			for i, o := range ops {
				replies[i].unknown = unknown
				var hold func()
				if id := replies[i].snap.ID; o.kind == opClaim && id != "" {
					hold = func() { s.hold(id) }
				}
				deliver(o, replies[i], hold)
			}
			return
		}
		var pgErr *pgconn.PgError
		serverSide := errors.As(err, &pgErr)
		switch {
		case ctx.Err() != nil:
			answer(ops, reply{err: err, unknown: true})
			return
		case !serverSide && !pgconn.SafeToRetry(err):
			unknown = true
			ops = s.keepEnds(ops, err)
		case !transient(err):
			if len(ops) == 1 {
				answer(ops, reply{err: err, unknown: unknown})
				return
			}
			for _, o := range ops {
				s.runBatch(ctx, []*op{o}, unknown)
			}
			return
		}
		if len(ops) == 0 {
			return
		}
		if time.Since(first) > s.opts.Lease {
			answer(ops, reply{err: err, unknown: unknown})
			return
		}
		select {
		case <-ctx.Done():
			answer(ops, reply{err: err, unknown: true})
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// keepEnds answers the ops of a batch whose outcome is unknown with err,
// but the ends, which it returns to be tried again.
func (s *Store) keepEnds(ops []*op, err error) []*op {
	ends := ops[:0]
	for _, o := range ops {
		if o.kind == opEnd {
			ends = append(ends, o)
			continue
		}
		deliver(o, reply{err: err, unknown: true}, nil)
	}
	return ends
}

// answer delivers r to each of ops.
func answer(ops []*op, r reply) {
	for _, o := range ops {
		deliver(o, r, nil)
	}
}

// apply sends ops as one batch, in one transaction: the ends, then the
// admissions, then the claims, so that a claim can start a job admitted
// in the same batch and an admission can take a slot an end freed. It
// returns a reply for each op, in order, once the transaction committed.
func (s *Store) apply(ctx context.Context, ops []*op) ([]reply, error) {
	var ends, subs, claims []int
	for i, o := range ops {
		switch o.kind {
		case opEnd:
			ends = append(ends, i)
		case opSubmit:
			subs = append(subs, i)
		default:
			claims = append(claims, i)
		}
	}
	b := &pgx.Batch{}
	stamp := traceStart()
	if len(ends) > 0 || len(subs) > 0 {
		b.Queue(qLockLedger, len(ends))
	}
	if len(ends) > 0 {
		ids, states, results, msgs, nows, scopes := make([]string, len(ends)), make([]int16, len(ends)),
			make([][]byte, len(ends)), make([]*string, len(ends)), make([]*int64, len(ends)), make([]*string, len(ends))
		for j, i := range ends {
			o := ops[i]
			ids[j], states[j], results[j], msgs[j], nows[j], scopes[j] = o.id, int16(o.state), o.payload, o.msg, o.now, o.scope
		}
		b.Queue(qLockEnds, ids)
		b.Queue(qEnd, ids, states, results, msgs, nows, len(ends), scopes)
		b.Queue(qNotifyEnds, len(ends))
	}
	var latest *int64
	if len(subs) > 0 {
		ids, tasks, reqs, keys, digests, nows := make([]string, len(subs)), make([]string, len(subs)),
			make([][]byte, len(subs)), make([]*string, len(subs)), make([]*string, len(subs)), make([]*int64, len(subs))
		tenants, bounds := make([]string, len(subs)), make([]int64, len(subs))
		keyed := []string{} // the keys alone, for the unique index's lookup
		for j, i := range subs {
			o := ops[i]
			ids[j], tasks[j], reqs[j], nows[j] = o.id, o.taskID, o.payload, o.now
			tenants[j], bounds[j] = o.tenant, int64(o.bound)
			if o.key != "" {
				keys[j], digests[j] = &o.key, &o.digest
				keyed = append(keyed, o.key)
			}
			if o.now != nil {
				latest = o.now
			}
		}
		b.Queue(qSubmit, ids, tasks, reqs, keys, digests, nows, max(s.cfg.MaxQueue, 0), keyed, tenants, bounds)
		if d := s.cfg.JobTTL; d > 0 {
			b.Queue(qEvictTTL, latest, d.Nanoseconds(), ids)
		}
		if m := s.cfg.MaxCompleted; m > 0 {
			b.Queue(qEvictLRU, m, ids)
		}
	}
	if len(claims) > 0 {
		var now *int64
		for _, i := range claims {
			if ops[i].now != nil {
				now = ops[i].now
			}
		}
		stamp.queueSeen(b)
		b.Queue(qClaim, now, s.opts.Replica, s.opts.Lease.Nanoseconds(), len(claims), inlineRequest)
	}
	stamp.queue(b)

	replies := make([]reply, len(ops))
	ctx, cancel := context.WithTimeout(ctx, max(2*s.opts.Lease, 10*time.Second))
	defer cancel()
	br := s.pool.SendBatch(ctx, b)
	err := s.readBatch(br, ops, ends, subs, claims, replies, stamp)
	if err == nil {
		err = stamp.scan(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	s.traceBatch(stamp, ops, replies)
	return replies, nil
}

// readBatch reads the results of apply's batch into replies, in the order
// apply queued the statements.
func (s *Store) readBatch(br pgx.BatchResults, ops []*op, ends, subs, claims []int, replies []reply, stamp *traceStamp) error {
	if len(ends) > 0 || len(subs) > 0 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if len(ends) > 0 {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		final := map[string]ledger.Snapshot{}
		for rows.Next() {
			snap, err := scanSnapshot(rows)
			if err != nil {
				rows.Close()
				return err
			}
			final[snap.ID] = snap
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, i := range ends {
			snap, ok := final[ops[i].id]
			replies[i] = reply{snap: snap, ended: ok}
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if len(subs) > 0 {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		j := 0
		admitted := map[string]int64{} // by tenant, the batch's admissions so far
		for rows.Next() {
			var (
				inserted, inRoom bool
				heldID, heldDig  *string
				live             int64
			)
			if err := rows.Scan(&inserted, &inRoom, &heldID, &heldDig, &live); err != nil {
				rows.Close()
				return err
			}
			if j >= len(subs) {
				rows.Close()
				return fmt.Errorf("postgres: %d admission rows for %d submits", j+1, len(subs))
			}
			o := ops[subs[j]]
			// A refused submit names the tenant's bound if the tenant was
			// at it when the submit's turn came, as a lone submit would.
			tenantFull := o.bound > 0 && live+admitted[o.tenant] >= int64(o.bound)
			replies[subs[j]] = submitReply(o, inserted, inRoom, tenantFull, heldID, heldDig)
			if inserted {
				admitted[o.tenant]++
			}
			j++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		var ttl, lru int64
		if s.cfg.JobTTL > 0 {
			tag, err := br.Exec()
			if err != nil {
				return fmt.Errorf("TTL eviction: %w", err)
			}
			ttl = tag.RowsAffected()
		}
		if s.cfg.MaxCompleted > 0 {
			tag, err := br.Exec()
			if err != nil {
				return fmt.Errorf("LRU eviction: %w", err)
			}
			lru = tag.RowsAffected()
		}
		defer func() { // counted once the batch commits: see apply
			s.evictedTTL.Add(uint64(ttl))
			s.evictedLRU.Add(uint64(lru))
		}()
	}
	if len(claims) > 0 {
		if err := stamp.scanSeen(br); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		j := 0
		for rows.Next() {
			var (
				req []byte
				n   *int32
			)
			snap, err := scanSnapshot(rowWith(rows, &req, &n))
			if err != nil {
				rows.Close()
				return err
			}
			if j < len(claims) {
				r := reply{snap: snap, req: req}
				if n != nil {
					r.reqLen = int(*n)
				}
				replies[claims[j]] = r
			}
			j++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for ; j < len(claims); j++ {
			replies[claims[j]] = reply{err: ledger.ErrNoWork}
		}
	}
	return nil
}

// submitReply is the answer to Submit o from its row of qSubmit.
func submitReply(o *op, inserted, inRoom, tenantFull bool, heldID, heldDigest *string) reply {
	switch {
	case inserted:
		return reply{id: o.id}
	case heldID != nil && *heldDigest == o.digest:
		return reply{id: *heldID, replayed: true}
	case heldID != nil:
		return reply{err: ledger.ErrKeyConflict}
	case inRoom:
		return reply{id: o.id, dup: true}
	case tenantFull:
		return reply{err: ledger.ErrTenantQueueFull}
	default:
		return reply{err: ledger.ErrQueueFull}
	}
}

// The statements of a batch, in the order apply queues them.
const (
	// qLockLedger locks the ledger row, the first lock of every batch
	// that admits or ends, and reserves a completion seq for each end
	// ($1): the batch's ends take next_seq-$1 on, in order; a refused
	// end leaves its seq unused.
	qLockLedger = `UPDATE ledger SET next_seq = next_seq + $1 WHERE id = 1`

	// qLockEnds locks the rows of the jobs to end in the order of their
	// ids, the order renewal and the reaper lock rows in, so that none
	// deadlock. Terminal rows are locked too (qEnd leaves them): a filter
	// on seq would let a generic plan made on a small table scan a partial
	// index of every live job instead of looking the ids up.
	qLockEnds = `SELECT 1 FROM jobs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`

	// qEnd ends each job that has no seq yet (PENDING or RUNNING) with its
	// state, payload, completion time (never before its other times) and
	// seq, its request and lease released, and takes the ended jobs from
	// the depth. It returns the final snapshots. Its plan reads the jobs by
	// their ids, whatever the statistics it was made from: "IS TRUE" keeps
	// the partial indexes of the live jobs, which a plan made on a small
	// table would scan whole, out of its choices.
	qEnd = `WITH e AS (
			SELECT * FROM unnest($1::text[], $2::int2[], $3::bytea[], $4::text[], $5::int8[], $7::text[])
				WITH ORDINALITY AS e(id, state, result, msg, now, scope, i)
		), up AS (
			UPDATE jobs j SET state = e.state, result = e.result, error = e.msg,
				completed_at = greatest(coalesce(e.now, ` + dbNow + `), j.created_at, j.started_at),
				seq = (SELECT next_seq FROM ledger WHERE id = 1) - $6::bigint + e.i - 1,
				request = NULL, lease_until = NULL
			FROM e WHERE j.id = ANY($1::text[]) AND j.id = e.id AND (j.seq IS NULL) IS TRUE
				AND (e.scope IS NULL OR j.tenant = e.scope)
			RETURNING j.id, j.task_id, j.tenant, j.state, j.error, j.created_at, j.started_at, j.completed_at
		), dec AS (
			UPDATE ledger SET depth = depth - (SELECT count(*) FROM up) WHERE id = 1
		)
		SELECT * FROM up`

	// qSubmit admits, in order, the submits whose key no retained job of
	// their tenant holds, each only if its tenant has room under its bound
	// ($10, 0 for none) and then only as many as the ledger's bound leaves
	// room for ($7); it inserts them holding their keys, adds them to the
	// depth and notifies workChannel. A tenant's room is its live jobs
	// counted here plus its earlier submits of the batch; the ledger's
	// rank counts only the submits that passed their tenant's bound. For
	// each submit, in order, it returns whether it was inserted, whether
	// it had room, the id and digest of the job holding its key, and its
	// tenant's live jobs before the batch. The batch holds the ledger
	// row's lock, which every admission and every end takes first, so the
	// depth and the counts read are the latest and no other batch admits
	// until this one commits.
	qSubmit = `WITH u AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::text[], $6::int8[],
				$9::text[], $10::int8[])
				WITH ORDINALITY AS u(id, task_id, request, k, d, now, tenant, bound, i)
		), held AS (
			SELECT tenant, idem_key, id, idem_digest FROM jobs WHERE idem_key = ANY($8::text[])
		), live AS (
			SELECT b.tenant, (SELECT count(*) FROM jobs WHERE tenant = b.tenant AND seq IS NULL) AS n
			FROM (SELECT DISTINCT tenant FROM u WHERE bound > 0) b
		), fresh AS (
			SELECT u.*, row_number() OVER (PARTITION BY u.tenant ORDER BY u.i) AS tr FROM u
			WHERE NOT EXISTS (SELECT 1 FROM held WHERE held.tenant = u.tenant AND held.idem_key = u.k)
		), passed AS (
			SELECT f.*, row_number() OVER (ORDER BY f.i) AS r FROM fresh f LEFT JOIN live l ON l.tenant = f.tenant
			WHERE f.bound <= 0 OR coalesce(l.n, 0) + f.tr <= f.bound
		), room AS (
			SELECT greatest($7::bigint - depth, 0) AS n FROM ledger WHERE id = 1
		), ins AS (
			INSERT INTO jobs (id, task_id, state, request, created_at, idem_key, idem_digest, tenant)
			SELECT p.id, p.task_id, 0, p.request, coalesce(p.now, ` + dbNow + `), p.k, p.d, p.tenant
			FROM passed p, room WHERE p.r <= room.n ORDER BY p.r
			ON CONFLICT (id) DO NOTHING RETURNING id
		), inc AS (
			UPDATE ledger SET depth = depth + (SELECT count(*) FROM ins) WHERE id = 1
		), wake AS (
			SELECT pg_notify('` + workChannel + `', '') FROM (SELECT 1 FROM ins LIMIT 1) one
		)
		SELECT ins.id IS NOT NULL, coalesce(p.r <= room.n, false), h.id, h.idem_digest, coalesce(l.n, 0)
		FROM u CROSS JOIN room LEFT JOIN ins ON ins.id = u.id LEFT JOIN passed p ON p.i = u.i
			LEFT JOIN held h ON h.tenant = u.tenant AND h.idem_key = u.k
			LEFT JOIN live l ON l.tenant = u.tenant, (SELECT count(*) FROM wake) w
		ORDER BY u.i`

	// qEvictTTL and qEvictLRU are the retention pass, run in a batch that
	// admitted a job (one of $3, or $2, exists): the terminal jobs
	// completed at least JobTTL before now ($1, the latest submit's
	// reading of the clock, or the database's), then the least recently
	// completed beyond MaxCompleted.
	qEvictTTL = `DELETE FROM jobs WHERE seq IS NOT NULL AND completed_at <= (SELECT coalesce($1, ` + dbNow + `) - $2::bigint)
		AND EXISTS (SELECT 1 FROM jobs WHERE id = ANY($3::text[]))`
	qEvictLRU = `DELETE FROM jobs WHERE seq IS NOT NULL AND seq <= (
			SELECT seq FROM jobs WHERE seq IS NOT NULL ORDER BY seq DESC OFFSET $1 LIMIT 1)
		AND EXISTS (SELECT 1 FROM jobs WHERE id = ANY($2::text[]))`

	// qClaim takes up to $4 of the oldest PENDING jobs whose request nobody
	// took (along jobs_claimable, whose predicate its WHERE clause is), and
	// takes and starts each under a lease of replica $2 (claim.go).
	// A request of up to $5 bytes is returned and released; a larger one
	// stays in its row for its caller to read.
	qClaim = `WITH c AS (
			SELECT id, request FROM jobs
			WHERE seq IS NULL AND state = 0 AND NOT taken AND request IS NOT NULL
			ORDER BY created_at, n LIMIT $4 FOR UPDATE SKIP LOCKED)
		UPDATE jobs j SET state = 1, taken = true,
			request = CASE WHEN octet_length(j.request) <= $5 THEN NULL ELSE j.request END,
			started_at = greatest(coalesce($1, ` + dbNow + `), j.created_at),
			owner = $2, lease_until = coalesce($1, ` + dbNow + `) + $3::bigint
		WHERE j.id = ANY(ARRAY(SELECT id FROM c))
		RETURNING j.id, j.task_id, j.tenant, j.state, j.error, j.created_at, j.started_at, j.completed_at,
			(SELECT c.request FROM c WHERE c.id = j.id AND octet_length(c.request) <= $5),
			(SELECT octet_length(c.request) FROM c WHERE c.id = j.id)`
)

// qNotifyEnds notifies the batch's ends in the order of their seqs,
// each with its id and final snapshot (notify.go), delivered at the
// commit, never before it and never if it fails.
var qNotifyEnds = `SELECT pg_notify('` + notifyChannel + `', id || E'\n' ||
		CASE WHEN octet_length(id) + 1 + octet_length(p) <= ` + strconv.Itoa(maxPayload) + ` THEN p ELSE '{"q":' || seq || '}' END)
	FROM (SELECT id, seq, json_build_object('t', task_id, 'n', tenant, 's', state, 'e', error, 'c', created_at,
			'b', started_at, 'd', completed_at, 'q', seq)::text AS p
		FROM jobs WHERE seq >= (SELECT next_seq FROM ledger WHERE id = 1) - $1::bigint
		ORDER BY seq LIMIT $1) ended`
