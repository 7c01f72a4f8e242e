package sqlite

import (
	"context"
	"fmt"
	"runtime"

	"github.com/jobledger/jobledger/ledger"
)

// The writer goroutine is the one user of the write connection from the end
// of Open to Close, and the one owner of the view. It takes the queued
// writes in batches of up to Options.BatchLimit and applies each batch in
// one transaction: group commit, one COMMIT and one fsync for the whole
// batch. Callers wait for their reply, which it sends only after the
// commit, so a write is acknowledged only once it is on disk.

// runWriter is the writer goroutine, started by Open with the view of the
// database it recovered.
func (s *Store) runWriter(v view) {
	defer close(s.writerDone)
	batch := make([]*op, 0, min(s.opts.BatchLimit, DefaultBatchLimit))
	for {
		select {
		case <-s.q.ready:
		case <-s.quit:
			s.refuseQueued()
			return
		}
		for {
			s.gather()
			batch = s.q.take(s.opts.BatchLimit, batch[:0])
			if len(batch) == 0 {
				break
			}
			v = s.commitBatch(v, batch)
			clear(batch) // drop the ops and their payloads
			select {
			case <-s.quit: // Close: this batch was the last
				s.refuseQueued()
				return
			default:
			}
		}
	}
}

// gather lets the callers that the last commit answered queue their next
// writes before the writer takes a batch, so that they join this batch
// rather than the next: it yields the processor as long as each yield
// lets the queue grow, and not beyond a full batch. Without it the callers
// split into two cohorts, those answered by one commit queueing during the
// next, so that a batch held about half of them (measured: 0.76 commits
// per job at 8 clients, against 0.57 with it; docs/performance.md). It
// waits on no timer, so a lone caller pays one yield.
func (s *Store) gather() {
	for n := s.q.len(); n < s.opts.BatchLimit; {
		runtime.Gosched()
		m := s.q.len()
		if m == n {
			return
		}
		n = m
	}
}

// refuseQueued closes the queue and answers what it still holds with
// ErrClosed: the writes queued when Close came, which never ran.
func (s *Store) refuseQueued() {
	for _, o := range s.q.close() {
		s.q.answer(o, reply{err: ledger.ErrClosed})
	}
}

// commitBatch applies batch to the database in one transaction, commits it,
// and only then publishes the new view, wakes the waiters of the jobs it
// ended and answers every caller, in that order. It returns the view the
// database now holds: the new one, or committed if the batch failed, in
// which case every op gets the failure (their outcome is unknown to the
// callers, and is in fact "nothing changed"). The writer's own reads in
// the transaction see the batch's earlier writes, so the ops apply in
// order, exactly as if each had had its own transaction.
func (s *Store) commitBatch(committed view, batch []*op) view {
	v := committed
	now, panicked := s.batchTime(&v)
	if panicked != nil {
		s.answerAll(batch, reply{panicked: panicked})
		return committed
	}
	ctx := context.Background() // no caller's context may cut a commit short
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		s.answerAll(batch, reply{err: fmt.Errorf("sqlite: beginning a transaction: %w", err)})
		return committed
	}
	t := &txq{ctx: ctx, tx: tx, prepared: s.writes}
	replies := make([]reply, len(batch))
	var ended []ledger.Snapshot
	wrote := false
	for i, o := range batch {
		r, w, end, err := s.apply(t, &v, o, now)
		if err != nil {
			tx.Rollback()
			s.answerAll(batch, reply{err: err})
			return committed
		}
		replies[i], wrote = r, wrote || w
		if end {
			ended = append(ended, r.snap)
		}
	}
	if !wrote {
		// Only refusals: nothing to make durable, and no fsync to pay.
		tx.Rollback()
		s.answerEach(batch, replies)
		return committed
	}
	if v.depth != committed.depth {
		if _, err := t.exec(qSetDepth, v.depth); err != nil {
			tx.Rollback()
			s.answerAll(batch, reply{err: fmt.Errorf("sqlite: storing the depth: %w", err)})
			return committed
		}
	}
	if err := tx.Commit(); err != nil {
		s.rollbackFailedCommit()
		s.answerAll(batch, reply{err: fmt.Errorf("sqlite: commit: %w", err)})
		return committed
	}
	// Durable from here on: only now may anyone see the batch's effects
	// through the view, a wakeup or a reply (see the package doc, "No
	// wakeup before durability").
	s.pub.store(v)
	s.pub.commits.Add(1)
	s.pub.writes.Add(uint64(len(batch)))
	s.wake(ended)
	s.answerEach(batch, replies)
	return v
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
		return r, r.err == nil, false, err
	case opStart:
		r, err = applyStart(t, o, s.isTaken(o.id), now)
		return r, r.err == nil, false, err
	default:
		r, ended, err = applyEnd(t, v, o, now)
		return r, ended, ended, err
	}
}

// batchTime reads the clock once for the whole batch (see view.tick). A
// panic of an injected clock is caught and handed to the callers, who
// re-raise it, as jobtable lets it through to its caller.
func (s *Store) batchTime(v *view) (now int64, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return v.tick(s.cfg.Now()), nil
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

func (s *Store) answerEach(batch []*op, replies []reply) {
	for i, o := range batch {
		s.q.answer(o, replies[i])
	}
}
