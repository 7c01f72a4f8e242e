package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/ledger"
)

// The writes, one function each, run by the writer inside a batch's
// transaction (see commitBatch). Each reads and changes the database
// through t and the writer's view v, and returns the reply for its caller;
// an error return is a failure of the database that aborts the whole batch,
// never a refusal (a refusal is a reply: ErrQueueFull, ErrNotPending, ...).
// The state machine is in the WHERE clauses of qStart and qEnd (only
// PENDING starts; a job ends only while it has no seq, that is, is not
// terminal), so a refused transition changes no row.

// applySubmit admits the job of o if the depth allows, as jobtable.Submit:
// first the admission (the writer is the only one to read and change
// v.depth, so the check and the increment are one step), then retention,
// then the insertion.
//
// Under an idempotency key (o.key), the key is looked up first, in the
// same transaction: a job that holds it answers the submit (a replay, or
// ErrKeyConflict for another digest) and nothing is admitted or evicted.
// A job whose LRU eviction the batch has counted but not yet deleted still
// holds its key: the replay is then ordered before the Submit that evicted
// it, as the other writes of the batch that name it are (retention.go).
func applySubmit(t *txq, cfg *ledger.Config, v *view, o *op, now int64) (reply, error) {
	if o.key != "" {
		var id, digest string
		err := t.queryRow(qKeyLookup, o.tenant, o.key).Scan(&id, &digest)
		switch {
		case err == nil && digest != o.digest:
			return reply{err: ledger.ErrKeyConflict}, nil
		case err == nil:
			return reply{snap: ledger.Snapshot{ID: id}, replayed: true}, nil
		case !errors.Is(err, sql.ErrNoRows):
			return reply{}, fmt.Errorf("sqlite: looking up an idempotency key: %w", err)
		}
	}
	if o.bound > 0 {
		// The tenant's live jobs, counted in the transaction that inserts
		// the job, by the one writer: the check and the count are one step.
		var live int
		if err := t.queryRow(qTenantLive, o.tenant).Scan(&live); err != nil {
			return reply{}, fmt.Errorf("sqlite: counting the live jobs of a tenant: %w", err)
		}
		if live >= o.bound {
			return reply{err: ledger.ErrTenantQueueFull}, nil
		}
	}
	if !admit(v.depth, cfg.MaxQueue) {
		return reply{err: ledger.ErrQueueFull}, nil
	}
	if err := evict(t, cfg, v, now); err != nil {
		return reply{}, err
	}
	req := o.payload
	if req == nil {
		req = []byte{} // NULL means released
	}
	var res sql.Result
	var err error
	if o.key != "" {
		res, err = t.exec(qInsertKeyed, o.id, o.taskID, req, now, v.nextN, o.key, o.digest, o.tenant)
	} else {
		res, err = t.exec(qInsert, o.id, o.taskID, req, now, v.nextN, o.tenant)
	}
	if err != nil {
		return reply{}, fmt.Errorf("sqlite: inserting job %s: %w", o.id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// The id source repeated an id: the caller's panic, as in
		// jobtable. Nothing was inserted and the depth is unchanged.
		return reply{panicked: fmt.Sprintf("sqlite: Config.NewID returned duplicate id %q", o.id)}, err
	}
	v.depth++
	v.jobs++
	v.nextN++
	return reply{snap: ledger.Snapshot{ID: o.id}}, nil
}

// admit reports whether a job may be admitted at depth under maxQueue.
func admit(depth, maxQueue int) bool { return depth < max(maxQueue, 0) }

// applyStart moves a PENDING job to RUNNING. If its request was taken in
// this process it is released in the same statement: the job can no
// longer run again after a restart (it will end FAILED), so nobody will
// read it. A request not yet taken stays until it is taken or the job
// ends, so TakeRequest after Start still hands it out, as in jobtable.
func applyStart(t *txq, o *op, taken bool, now int64) (reply, error) {
	snap, err := scanSnapshot(t.queryRow(qStart, now, taken, o.id, o.scope))
	switch {
	case err == nil:
		return reply{snap: snap}, nil
	case errors.Is(err, sql.ErrNoRows):
		return refused(t, o, ledger.ErrNotPending)
	default:
		return reply{}, fmt.Errorf("sqlite: starting job %s: %w", o.id, err)
	}
}

// applyEnd ends a job that is not terminal in the state of o's kind, with
// o's result or error, releasing its request and giving it the next
// completion seq. It reports whether the job ended (and so must be woken).
func applyEnd(t *txq, v *view, o *op, now int64) (reply, bool, error) {
	var result []byte
	if o.kind == opFinish {
		result = o.payload
	}
	snap, err := scanSnapshot(t.queryRow(qEnd, int64(o.kind.terminalState()), result, o.cause, now, v.nextSeq, o.id, o.scope))
	switch {
	case err == nil:
		v.depth--
		v.retained++
		v.nextSeq++
		return reply{snap: snap}, true, nil
	case errors.Is(err, sql.ErrNoRows):
		r, err := refused(t, o, ledger.ErrTerminal)
		return r, false, err
	default:
		return reply{}, false, fmt.Errorf("sqlite: ending job %s: %w", o.id, err)
	}
}

// refused is the reply to the transition o that changed nothing:
// ErrNotFound for a job the store does not hold or o's scope does not see,
// else why with the job's snapshot.
func refused(t *txq, o *op, why error) (reply, error) {
	id := o.id
	snap, err := scanSnapshot(t.queryRow(qLookup, id))
	switch {
	case err == nil && (!o.scope.Valid || o.scope.String == snap.Tenant):
		return reply{snap: snap, err: why}, nil
	case err == nil, errors.Is(err, sql.ErrNoRows):
		return reply{err: ledger.ErrNotFound}, nil
	default:
		return reply{}, fmt.Errorf("sqlite: reading job %s: %w", id, err)
	}
}
