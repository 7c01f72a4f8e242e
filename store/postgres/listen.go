package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobledger/jobledger/ledger"
)

// The listener is one connection per Store, outside the pool, that
// LISTENs on notifyChannel and workChannel. Open connects it and LISTENs
// (LISTEN takes effect at once outside a transaction) before the store
// serves; the listener goroutine then hands each end notification's job
// id and snapshot to kick and to the OnEnd functions, and each work
// notification to Work's channel. When the connection fails,
// notifications sent meanwhile are lost, so the listener is marked down
// (health.go), and the Waits poll their jobs until it is up again; once
// it has reconnected and LISTENs again it kicks every waiter, and each
// re-reads its job (an end committed since its last poll is then seen),
// and signals Work (a claimer then claims what was admitted meanwhile).
//
// A connection can also fail silently: the server's host crashed or a
// route dropped, and the TCP connection is half-open, so a wait for a
// notification would last until TCP gives up, every notification
// meanwhile lost. So the listener waits at most Lease/3 at a time; when
// none came, it pings the connection, under the same bound, and treats a
// failed ping as a failed connection. A silent connection is thus
// noticed, and the reconnect made, within 2·Lease/3 of its last sign of
// life, about when the keeper's renewals would find the database gone
// too.

// connectListener opens the listener's connection and LISTENs on it, and
// then marks the listener up.
func (s *Store) connectListener(ctx context.Context, cc *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return nil, fmt.Errorf("%w: the listener: %w", ErrUnreachable, err)
	}
	for _, ch := range []string{notifyChannel, workChannel} {
		if _, err := conn.Exec(ctx, `LISTEN `+ch); err != nil {
			conn.Close(context.Background())
			return nil, fmt.Errorf("postgres: LISTEN %s: %w", ch, err)
		}
	}
	s.listenerUp()
	return conn, nil
}

// listen is the listener goroutine: it runs until ctx ends, then closes
// its connection and closes s.listenDone. seen is the highest completion
// seq whose end needs no report to OnEnd: each end notification with a
// higher one is reported and raises it. Ends commit in the order of
// their seqs (each holds the ledger row's lock until its commit), and
// PostgreSQL delivers notifications in commit order, so after a
// reconnect the ends missed are those with seqs between seen and the
// ledger's next_seq read once LISTENing again: catchUp reports the ones
// still retained, and the notifications of those that committed after
// the LISTEN are then not reported twice.
func (s *Store) listen(ctx context.Context, cc *pgx.ConnConfig, conn *pgx.Conn, seen int64) {
	defer close(s.listenDone)
	backoff := 10 * time.Millisecond
	for {
		if conn == nil {
			if s.beforeReconnect != nil {
				s.beforeReconnect()
			}
			// A failed connect or catch-up waits, doubling each time, so
			// that a database that accepts connections but fails queries
			// is not hit by a loop of reconnects and re-reads.
			var err error
			if conn, err = s.connectListener(ctx, cc); err == nil {
				s.kickAll()
				s.signalWork()
				if seen, err = s.catchUp(ctx, seen); err != nil {
					closeListener(conn)
					conn = nil
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.listenerDown(err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Second)
				continue
			}
			backoff = 10 * time.Millisecond
		}
		n, err := s.notification(ctx, conn)
		if err != nil {
			closeListener(conn)
			conn = nil
			if ctx.Err() != nil {
				return
			}
			s.listenerDown(err)
			continue
		}
		if n.Channel == workChannel {
			s.signalWork()
			continue
		}
		id, final, seq := parsePayload(n.Payload)
		s.kick(id, final)
		if seq > seen {
			seen = seq
			s.reportEnd(ctx, id, final)
		}
	}
}

// notification waits for conn's next notification. A wait of Lease/3 with
// none is answered by a ping of conn, bounded likewise: if it succeeds,
// the wait goes on; if it fails, its error is returned, as any failure of
// conn is. It returns when ctx ends.
func (s *Store) notification(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	every := s.opts.Lease / 3
	for {
		wctx, cancel := context.WithTimeout(ctx, every)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case n != nil:
			return n, nil
		case err == nil:
			continue // nothing, and no failure: wait again
		case ctx.Err() != nil || !pgconn.Timeout(err):
			return nil, err
		}
		// Idle for Lease/3 (pgx leaves the connection usable after a
		// wait that timed out): is the server still there?
		pctx, cancel := context.WithTimeout(ctx, every)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
}

// closeListener closes a listener's connection that failed or is being
// given up, without waiting long for a server that may be gone.
func closeListener(conn *pgx.Conn) {
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(cctx)
}

// catchUp reports to OnEnd the ends with seqs above seen that are still
// retained, read once the listener LISTENs again, and returns the seq
// below the ledger's next_seq as read then: the ends the listener missed
// while it was away are among them.
func (s *Store) catchUp(ctx context.Context, seen int64) (int64, error) {
	var next int64
	if err := s.pool.QueryRow(ctx, `SELECT next_seq FROM ledger WHERE id = 1`).Scan(&next); err != nil {
		return seen, err
	}
	s.onEndMu.Lock()
	none := len(s.onEnd) == 0
	s.onEndMu.Unlock()
	if none || next-1 <= seen {
		return max(seen, next-1), nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+snapCols+` FROM jobs WHERE seq > $1 AND seq < $2 ORDER BY seq`, seen, next)
	if err != nil {
		return seen, err
	}
	ends, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Snapshot, error) { return scanSnapshot(r) })
	if err != nil {
		return seen, err
	}
	for _, snap := range ends {
		s.ended(snap)
	}
	return next - 1, nil
}

// reportEnd calls the OnEnd functions, if any, with the final snapshot of
// job id: final, or if the notification carried none, the row's, unless
// it is gone or cannot be read.
func (s *Store) reportEnd(ctx context.Context, id string, final *ledger.Snapshot) {
	s.onEndMu.Lock()
	none := len(s.onEnd) == 0
	s.onEndMu.Unlock()
	if none {
		return
	}
	if final == nil {
		snap, err := s.readSnapshot(ctx, id)
		if err != nil || !snap.State.Terminal() {
			return
		}
		final = &snap
	}
	s.ended(*final)
}

// dropListener closes the listener's connection from the server's side,
// for tests of the reconnect: it terminates every backend of this
// database that LISTENs.
func (s *Store) dropListener(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`)
	return err
}
