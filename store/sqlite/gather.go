package sqlite

import "time"

// gatherer decides how long the writer keeps a batch's transaction open
// for more writes. Writes come from callers that each wait for their
// answer and then, most of them, queue the next write after a read or two:
// a runner's Start after its TakeRequest, its Finish after Start. If the
// writer committed whatever was queued when it began, the callers would
// split into two cohorts, those answered by one commit queueing during the
// next, and a batch would hold about half of them. So after it has applied
// what was queued, the writer goes on taking writes into the open
// transaction as they are queued, applying each at once, until the batch
// holds as many as the last one carried plus those queued while it
// committed (load is taken to be steady), or for at most half as long as
// the last COMMIT took (and never more than maxGatherWait). A lone caller
// never waits: its one write is the whole batch it expects.
//
// This is the store's only use of the real clock, and it decides only when
// a batch is committed, never what is stored (Config.Now does). The writer
// goroutine owns the gatherer.
type gatherer struct {
	expect     int           // writes the next batch is expected to hold
	lastCommit time.Duration // how long the last COMMIT took
	timer      *time.Timer   // reused; runs only while waiting is true
	waiting    bool          // the wait of the batch being applied has not ended
	maxWait    time.Duration // bounds every wait; maxGatherWait when zero
}

// maxGatherWait bounds the wait of one batch whatever the last commit took.
const maxGatherWait = time.Millisecond

// gatherWait is how long a batch waits for writes after a commit that took
// lastCommit.
func gatherWait(lastCommit time.Duration) time.Duration {
	return min(lastCommit/2, maxGatherWait)
}

// begin starts the wait of a batch.
func (g *gatherer) begin() {
	d := gatherWait(g.lastCommit)
	if g.maxWait > 0 {
		d = min(g.lastCommit/2, g.maxWait)
	}
	if g.waiting = d > 0; !g.waiting {
		return
	}
	if g.timer == nil {
		g.timer = time.NewTimer(d)
	} else {
		g.timer.Reset(d)
	}
}

// more returns the writes to add to a batch that holds have of at most
// limit: those queued, at once; if none is, and the batch holds fewer than
// expected, the first to be queued within the wait. It returns none, and
// ends the wait, once the batch is full, holds what was expected, the wait
// is over, or quit is closed (Close: the writes still queued are refused).
func (g *gatherer) more(q *queue, have, limit int, quit <-chan struct{}) []*op {
	for have < limit {
		select {
		case <-quit:
			g.end()
			return nil
		default:
		}
		if ops := q.take(limit-have, nil); len(ops) > 0 {
			return ops
		}
		if !g.waiting || have >= g.expect {
			break
		}
		select {
		case <-q.ready: // a push; ready holds one signal for any number
		case <-g.timer.C:
			g.waiting = false
		case <-quit:
		}
	}
	g.end()
	return nil
}

// end ends the wait of the batch, if it still runs.
func (g *gatherer) end() {
	if g.waiting {
		g.timer.Stop()
		g.waiting = false
	}
}
