//go:build !postgres_trace

package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The trace hooks, compiled out: each is empty and inlines to nothing, so
// a normal build sends exactly the statements it would without them. The
// build tag postgres_trace swaps in trace.go, which ends each traced
// transaction with a counter in commit order and logs it as
// spec/SharedLedger.tla's actions (docs/verification.md, "Trace
// validation of the PostgreSQL store").

type traceStamp struct{}

func traceStart() *traceStamp                              { return nil }
func (*traceStamp) queue(*pgx.Batch)                       {}
func (*traceStamp) queueSeen(*pgx.Batch)                   {}
func (*traceStamp) scan(pgx.BatchResults) error            { return nil }
func (*traceStamp) scanSeen(pgx.BatchResults) error        { return nil }
func traceTx(context.Context, pgx.Tx) (*traceStamp, error) { return nil, nil }
func (s *Store) traceBatch(*traceStamp, []*op, []reply)    {}
func (s *Store) traceReaped(*traceStamp, []string, *int64) {}
func (s *Store) traceOpened(*traceStamp, []string, *int64) {}
func (s *Store) traceClosed()                              {}
