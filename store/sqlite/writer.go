package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/jobledger/jobledger/ledger"
)

// The writer goroutine is the one user of the write connection from the end
// of Open to Close, and the one owner of the view and the gatherer. It
// takes the queued writes into batches of up to Options.BatchLimit, keeps
// each open for the writes queued next while the gatherer says so, and
// applies each batch in one transaction: group commit, one COMMIT and one
// fsync for the whole batch. Callers wait for their reply, which it sends
// only after the commit, so a write is acknowledged only once it is on
// disk.

// runWriter is the writer goroutine, started by Open with the view of the
// database it recovered.
func (s *Store) runWriter(v view) {
	defer close(s.writerDone)
	buf := make([]*op, 0, min(s.opts.BatchLimit, DefaultBatchLimit))
	for {
		select {
		case <-s.q.ready:
		case <-s.quit:
			s.refuseQueued()
			return
		}
		for {
			first := s.q.take(s.opts.BatchLimit, buf[:0])
			if len(first) == 0 {
				break
			}
			var batch []*op
			v, batch = s.commitBatch(v, first)
			s.gather.expect = len(batch) + s.q.len()
			clear(batch) // drop the ops and their payloads
			buf = batch[:0]
			select {
			case <-s.quit: // Close: this batch was the last
				s.refuseQueued()
				return
			default:
			}
		}
	}
}

// refuseQueued closes the queue and answers what it still holds with
// ErrClosed: the writes queued when Close came, which never ran.
func (s *Store) refuseQueued() {
	for _, o := range s.q.close() {
		s.q.answer(o, reply{err: ledger.ErrClosed})
	}
}

// batch is the writes of one transaction, with what applying them gave.
type batch struct {
	ops     []*op
	replies []reply
	ended   []ledger.Snapshot // the final snapshots of the jobs it ended
	wrote   bool              // some write changed the database
}

// commitBatch opens a transaction, applies the writes of first to it, and
// then those the gatherer lets join, each as it is taken; commits once;
// checks that the file it committed to is still the one the store's path
// names (else the batch fails with ErrDetached, and so does every later
// one), writes the commit mark, and only then publishes the new view,
// wakes the waiters of the jobs it ended and answers every caller, in that
// order. It returns the view the
// database now holds, the new one or committed if the batch failed (every
// write then gets the failure: their outcome is unknown to the callers,
// and is in fact "nothing changed"), and every write of the batch. The
// writer's own reads in the transaction see the batch's earlier writes,
// so the writes apply in order, exactly as if each had had its own
// transaction.
func (s *Store) commitBatch(committed view, first []*op) (view, []*op) {
	v := committed
	b := &batch{ops: first}
	if s.detached != nil {
		s.answerAll(b.ops, reply{err: s.detached})
		return committed, b.ops
	}
	ctx := context.Background() // no caller's context may cut a commit short
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		s.answerAll(b.ops, reply{err: fmt.Errorf("sqlite: beginning a transaction: %w", err)})
		return committed, b.ops
	}
	t := &txq{ctx: ctx, tx: tx, prepared: s.writes}
	traceBatchBegin()
	s.gather.begin()
	defer s.gather.end()
	for ops := first; len(ops) > 0; {
		if failed := s.applyAll(t, &v, b, ops); failed != nil {
			tx.Rollback()
			s.answerAll(b.ops, *failed)
			return committed, b.ops
		}
		ops = s.gather.more(s.q, len(b.ops), s.opts.BatchLimit, s.quit)
		b.ops = append(b.ops, ops...)
	}
	if !b.wrote {
		// Only refusals and replays (a keyed Submit answered from a
		// committed row): nothing to make durable, and no fsync to pay.
		// A replay names a job of the file: the file must still be the
		// path's.
		tx.Rollback()
		if s.detach() {
			s.answerAll(b.ops, reply{err: s.detached})
			return committed, b.ops
		}
		s.answerEach(b.ops, b.replies)
		return committed, b.ops
	}
	if err := flushEvictions(t, &v); err != nil {
		tx.Rollback()
		s.answerAll(b.ops, reply{err: err})
		return committed, b.ops
	}
	if v.depth != committed.depth {
		if _, err := t.exec(qSetDepth, v.depth); err != nil {
			tx.Rollback()
			s.answerAll(b.ops, reply{err: fmt.Errorf("sqlite: storing the depth: %w", err)})
			return committed, b.ops
		}
	}
	if v.nextN != committed.nextN {
		if _, err := t.exec(qSetNextN, v.nextN); err != nil {
			tx.Rollback()
			s.answerAll(b.ops, reply{err: fmt.Errorf("sqlite: storing the next ordinal: %w", err)})
			return committed, b.ops
		}
	}
	v.commits++
	if _, err := t.exec(qSetCommits, v.commits); err != nil {
		tx.Rollback()
		s.answerAll(b.ops, reply{err: fmt.Errorf("sqlite: storing the commit count: %w", err)})
		return committed, b.ops
	}
	start := time.Now()
	err = tx.Commit()
	s.gather.lastCommit = time.Since(start)
	if err != nil {
		s.rollbackFailedCommit()
		s.answerAll(b.ops, reply{err: fmt.Errorf("sqlite: commit: %w", err)})
		return committed, b.ops
	}
	// Durable from here on, if the file is still the one the next Open
	// will find: only then may anyone see the batch's effects through the
	// view, a wakeup or a reply.
	if s.detach() {
		s.answerAll(b.ops, reply{err: s.detached})
		return committed, b.ops
	}
	s.lock.writeMark(v.commits) // a mark left lower only checks less (mark.go)
	s.pub.store(v)
	s.pub.commits.Add(1)
	s.pub.writes.Add(uint64(len(b.ops)))
	s.wake(b.ended)
	s.answerEach(b.ops, b.replies)
	return v, b.ops
}

// applyAll applies ops, the writes just taken into b, in order, at a time
// read from the clock now: after each was queued, before any is answered.
// It returns the reply every write of the batch gets if the batch fails: a
// failure of the database, or a panic of the injected clock (re-raised in
// every caller, as jobtable lets it through to its caller).
func (s *Store) applyAll(t *txq, v *view, b *batch, ops []*op) *reply {
	now, panicked := s.batchTime(v)
	if panicked != nil {
		return &reply{panicked: panicked}
	}
	for _, o := range ops {
		ev0 := traceEvicted(v)
		r, w, end, err := s.apply(t, v, o, now)
		if err != nil {
			return &reply{err: err}
		}
		traceApplied(o, r, v, now, ev0)
		b.replies = append(b.replies, r)
		b.wrote = b.wrote || w
		if end {
			b.ended = append(b.ended, r.snap)
		}
	}
	return nil
}

// apply runs op o inside t. It reports whether o changed the database
// (wrote) and whether it ended a job (ended); err is a failure of the
// database, which aborts the batch.
func (s *Store) apply(t *txq, v *view, o *op, now int64) (r reply, wrote, ended bool, err error) {
	if err := o.ctx.Err(); err != nil {
		// The caller gave up before its write ran: it is not run at all.
		return reply{err: err}, false, false, nil
	}
	switch o.kind {
	case opSubmit:
		r, err = applySubmit(t, &s.cfg, v, o, now)
		return r, r.err == nil && !r.replayed, false, err
	case opStart:
		r, err = applyStart(t, o, s.isTaken(o.id), now)
		return r, r.err == nil, false, err
	default:
		r, ended, err = applyEnd(t, v, o, now)
		return r, ended, ended, err
	}
}

// batchTime reads the clock for the writes taken together (see view.tick).
// A panic of an injected clock is caught and returned.
func (s *Store) batchTime(v *view) (now int64, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return v.tick(s.cfg.Now()), nil
}

// detach checks that the store's path still names the file it holds
// (fileLock.checkNamed) and reports whether it does not; from the first
// time it does not, s.detached holds the error every write gets.
func (s *Store) detach() bool {
	if s.detached == nil {
		s.detached = s.lock.checkNamed(s.path)
	}
	return s.detached != nil
}

// rollbackFailedCommit ends the transaction whose COMMIT failed. SQLite
// leaves it open after some failures (a deferred constraint, SQLITE_BUSY),
// and database/sql has already let go of it, so it is rolled back on the
// write connection, the pool's only one. An error means that there was
// nothing left to roll back.
func (s *Store) rollbackFailedCommit() {
	s.wdb.ExecContext(context.Background(), "ROLLBACK")
}

// wake is the after-commit step of the jobs of ended, which the batch just
// made terminal: it drops their take marks (a terminal job answers
// ErrTerminal to every TakeRequest from now on, so the mark is no longer
// needed) and wakes their waiters, handing each the final snapshot.
func (s *Store) wake(ended []ledger.Snapshot) {
	if len(ended) == 0 {
		return
	}
	s.takeMu.Lock()
	for _, snap := range ended {
		delete(s.taken, snap.ID)
	}
	s.takeMu.Unlock()
	s.waitMu.Lock()
	for _, snap := range ended {
		s.wakeLocked(snap)
	}
	s.waitMu.Unlock()
}

func (s *Store) answerAll(batch []*op, r reply) {
	for _, o := range batch {
		s.q.answer(o, r)
	}
}

// answerEach answers each write of a batch that committed, or that wrote
// nothing, with its own reply.
func (s *Store) answerEach(batch []*op, replies []reply) {
	traceCommitted(s)
	for i, o := range batch {
		s.q.answer(o, replies[i])
	}
}
