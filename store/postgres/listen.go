package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/ledger"
)

// The listener is one connection per Store, outside the pool, that
// LISTENs on notifyChannel and workChannel. Open connects it and LISTENs
// (LISTEN takes effect at once outside a transaction) before the store
// serves; the listener goroutine then hands each end notification's job
// id and snapshot to kick and to the OnEnd functions, and each work
// notification to Work's channel. When the connection fails,
// notifications sent meanwhile are lost, so once it has reconnected and
// LISTENs again it kicks every waiter, and each re-reads its job (an end
// committed while it was away is then seen), and signals Work (a claimer
// then claims what was admitted meanwhile).

// connectListener opens the listener's connection and LISTENs on it.
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
					conn.Close(context.Background())
					conn = nil
				}
			}
			if err != nil {
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
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
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
