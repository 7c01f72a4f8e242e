package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Shared is what a store shared by several processes (replicas of a server
// on one database) adds to the contract, so that the work, the deadlines
// and the cancels are shared as the jobs are: a job admitted by a busy
// replica runs on an idle one, and a cancel on one replica stops the model
// call on another. The memory and SQLite stores, each of one process, do
// not implement it; AsShared finds it behind WithCodecs.
type Shared[Req any] interface {
	// Claim takes the oldest PENDING job whose request nobody has taken,
	// takes its request and starts it, in one atomic step across all
	// processes, for this one, under a lease that the store renews while
	// this process lives. It returns the snapshot Start would, or
	// ErrNoWork when no job is claimable. A job whose lease lapses (its
	// process died) is ended FAILED by any replica's reaper, with the
	// decrement and the wakeups of any end; a late end from the dead
	// process then gets ErrTerminal.
	Claim(ctx context.Context) (Snapshot, Req, error)
	// Work receives, coalesced, when a job may have become claimable: an
	// admission on any replica, or a reconnect after which admissions may
	// have been missed. A claimer waits on it between empty Claims.
	Work() <-chan struct{}
	// OnEnd registers fn, called with the final snapshot of every job that
	// ends on any replica (this one included), after the commit, from one
	// goroutine and never concurrently with itself. Register before
	// serving; fn must not block.
	OnEnd(fn func(Snapshot))
	// Now reads the shared clock, the one the snapshots' times come from,
	// so that replicas need not agree on time.
	Now(ctx context.Context) (time.Time, error)
}

// ErrNoWork is Claim's answer when no job is claimable.
var ErrNoWork = ledgertype.ErrNoWork

// AsShared returns l's Shared side, and whether it has one, looking
// through WithCodecs: the requests Claim returns are then decoded.
func AsShared[Req, Res any](l Ledger[Req, Res]) (Shared[Req], bool) {
	if s, ok := l.(Shared[Req]); ok {
		return s, true
	}
	if c, ok := any(l).(*coded[Req, Res]); ok {
		if s, ok := c.Ledger.(Shared[[]byte]); ok {
			return &codedShared[Req]{Shared: s, req: c.req}, true
		}
	}
	return nil, false
}

// codedShared is a Shared of bytes seen as a Shared of Req.
type codedShared[Req any] struct {
	Shared[[]byte]
	req Codec[Req]
}

func (c *codedShared[Req]) Claim(ctx context.Context) (Snapshot, Req, error) {
	var zero Req
	snap, b, err := c.Shared.Claim(ctx)
	if err != nil {
		return snap, zero, err
	}
	v, err := c.req.Decode(b)
	if err != nil {
		return snap, zero, fmt.Errorf("ledger: decoding the request of job %s: %w", snap.ID, err)
	}
	return snap, v, nil
}
