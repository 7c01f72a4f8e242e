package stress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"

	"github.com/jobledger/jobledger/jobtable"
)

// The workers of a table-level stress (Run): what each kind of client does
// through its recording Client until the run ends.

// workload is the shared state of one stress run's workers.
type workload struct {
	*stressRun
	ledger Ledger       // what the workers drive, for the keyed races' clients
	jobs   chan string  // accepted ids, for the runners
	inWait atomic.Int64 // waiters inside an unbounded Wait
}

// submitter submits until the run ends: one submit in KeyedEvery keyed
// (keyed.go), the others plainly.
func (w *workload) submitter(ctx context.Context, c *Client, r *rand.Rand) {
	bg := context.Background()
	var racers []*Client // of its keyed races
	for n := 0; w.more(ctx); n++ {
		if w.cfg.KeyedEvery > 0 && r.IntN(w.cfg.KeyedEvery) == 0 {
			w.submitKeyed(bg, c, &racers, r)
			continue
		}
		id, err := c.Submit(bg, fmt.Sprintf("task-%d-%d", c.ID(), n), fmt.Sprintf("req-%d-%d", c.ID(), n))
		w.countSubmit(id, err)
	}
}

// countSubmit counts what a submit got back: a job accepted (remembered,
// for the readers, and queued for the runners) or a refusal.
func (w *workload) countSubmit(id string, err error) {
	if err != nil {
		w.rejected.Add(1)
		runtime.Gosched()
		return
	}
	w.accepted.Add(1)
	w.remember(id)
	w.jobs <- id
}

// submitKeyed sends the run's next keyed submit through c, or, the first
// of a fresh key, keyRace of them at once through c and the racing
// clients. A key's request is "req-" and its name, its digest the
// request itself: equal requests, equal digests.
func (w *workload) submitKeyed(ctx context.Context, c *Client, racers *[]*Client, r *rand.Rand) {
	t := w.keyed.next(w.cfg.Keys, r)
	req := "req-" + t.name
	if t.other {
		req += "-other"
	}
	send := func(c *Client) {
		id, replayed, err := c.SubmitKeyed(ctx, t.name, req, "task-"+t.name, req)
		switch {
		case errors.Is(err, jobtable.ErrKeyConflict):
			w.keyed.conflicts.Add(1)
		case err == nil && replayed:
			w.keyed.replays.Add(1)
		default:
			w.countSubmit(id, err)
		}
	}
	if !t.race {
		send(c)
		return
	}
	for len(*racers) < keyRace-1 {
		*racers = append(*racers, w.rec.Client(w.ledger))
	}
	race(c, *racers, send)
}

// runner plays the worker pool: it takes each accepted job's request,
// starts it and ends it, and now and then repeats a call that must fail
// (a second TakeRequest, a second terminal call, a Start after the end). It
// runs until the queue of accepted jobs is closed and drained.
func (w *workload) runner(c *Client, r *rand.Rand) {
	bg := context.Background()
	for id := range w.jobs {
		c.TakeRequest(bg, id)
		if r.IntN(4) == 0 {
			c.TakeRequest(bg, id)
		}
		c.Start(bg, id)
		runtime.Gosched() // let readers see RUNNING
		switch k := r.IntN(10); {
		case k < 7:
			c.Finish(bg, id, "res-"+id)
		case k < 9:
			c.Fail(bg, id, "failed-"+id)
		default:
			c.Timeout(bg, id, "deadline-"+id)
		}
		if r.IntN(4) == 0 {
			c.Timeout(bg, id, "late-"+id)
		}
		if r.IntN(8) == 0 {
			c.Start(bg, id)
		}
	}
}

// poller reads recent jobs, and now and then cancels one (a Timeout that
// races the runners' terminal calls).
func (w *workload) poller(ctx context.Context, c *Client, r *rand.Rand) {
	bg := context.Background()
	for w.more(ctx) {
		id := w.pick(r, false)
		if id == "" {
			runtime.Gosched()
			continue
		}
		switch k := r.IntN(20); {
		case k < 10:
			c.Snapshot(bg, id)
		case k < 19:
			c.Result(bg, id)
		default:
			c.Timeout(bg, id, "cancelled-"+id)
		}
		runtime.Gosched() // leave the cores to submitters and runners
	}
}

// waiter waits on the newest job, alternately with a short deadline of its
// own and with none (stopped only by waitCtx, which ends when Grace runs
// out at the end of the run).
func (w *workload) waiter(ctx, waitCtx context.Context, c *Client, r *rand.Rand) {
	for n := 0; w.more(ctx); n++ {
		id := w.pick(r, r.IntN(4) != 0)
		if id == "" {
			runtime.Gosched()
			continue
		}
		if n%2 == 0 {
			w.inWait.Add(1)
			c.Wait(waitCtx, id)
			w.inWait.Add(-1)
			continue
		}
		wctx, cancel := context.WithTimeout(waitCtx, w.cfg.WaitTimeout)
		c.Wait(wctx, id)
		cancel()
		runtime.Gosched()
	}
}
