package httpstress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/linearizability"
)

// The clients of an HTTP-level stress (RunHTTP): what each kind does
// through its recording HTTPClient until the run ends, and the drain that
// follows.

// httpRun is the bookkeeping of one run, shared by every life and replica
// of it: the core's, and the jobs that keyed 202s named.
type httpRun struct {
	*stress.Tally
	rec *stress.Recorder

	mu  sync.Mutex      // guards ids
	ids map[string]bool // the jobs keyed 202s named
}

func newHTTPRun(cfg stress.Config) *httpRun {
	rec := stress.NewRecorder()
	return &httpRun{Tally: stress.NewTally(cfg, rec), rec: rec}
}

// named records that a keyed 202 named id, and reports whether it was the
// first to.
func (r *httpRun) named(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[id] {
		return false
	}
	if r.ids == nil {
		r.ids = make(map[string]bool)
	}
	r.ids[id] = true
	return true
}

// httpWorkload is the shared state of one HTTP stress's clients.
type httpWorkload struct {
	*httpRun
	cfg HTTPConfig // its Config is the Tally's
	api *client.Client
	// peer, if set, returns the server of the j-th racing client of a
	// keyed race (racingClients), nil for none now.
	peer  func(j int) *client.Client
	lost  atomic.Int64
	walks atomic.Int64 // walks of the listing begun, at most maxWalks
}

// A poller walks the whole listing (GET /jobs, every page) in its first
// poll of a workload (one server's life in the crash test, one replica's in
// the replicas test), so that even a short or starved run walks it, and
// then in one poll of walkEvery, at most maxWalks times a workload: a walk
// of thousands of retained jobs is tens of pages, and checking one is
// quadratic in the jobs it lists.
const (
	walkEvery = 200
	maxWalks  = 20
)

// drainLostLooks is how many replies in a row drainOne may lose past its
// deadline before it gives up on a job: a lost reply says nothing of it.
const drainLostLooks = 3

// drainOne waits on id until it is seen terminal or gone, or deadline
// passes; it reports whether the job was seen ended. It looks at least
// once, so a job that ended before a deadline already past is seen ended,
// and again after a lost reply, up to drainLostLooks in a row.
func (w *httpWorkload) drainOne(ctx context.Context, c *HTTPClient, id string, deadline time.Time) bool {
	lost := 0 // replies lost in a row
	for first := true; first || lost > 0 && lost < drainLostLooks || time.Now().Before(deadline); first = false {
		out, err := c.Wait(ctx, id, min(max(time.Until(deadline), 0), time.Second).Truncate(time.Millisecond)+time.Millisecond)
		if err != nil {
			w.lost.Add(1)
			lost++
			continue
		}
		lost = 0
		if out.Outcome == linearizability.NotFound || out.State.Terminal() {
			return true
		}
	}
	return false
}

// params returns the echo params of the n-th job of client c: a number that
// makes the result unique, and a sleep; a long job sleeps a quarter past
// the submit's wait.
func (w *httpWorkload) params(c, n int, r *rand.Rand, long bool) string {
	sleep := r.Int64N(w.cfg.MaxSleep.Milliseconds() + 1)
	switch {
	case long:
		sleep = (w.cfg.SubmitWait + w.cfg.SubmitWait/4).Milliseconds()
	case w.cfg.SlowEvery > 0 && r.IntN(w.cfg.SlowEvery) == 0:
		sleep = 2 * w.cfg.JobTimeout.Milliseconds()
	}
	return fmt.Sprintf(`{"n":"%d-%d","sleep_ms":%d}`, c, n, sleep)
}

// submit sends the n-th job of c: one in SubmitWaitEvery with Prefer: wait
// (one of those in LongWaitEvery a long one), the others plainly.
func (w *httpWorkload) submit(ctx context.Context, c *HTTPClient, r *rand.Rand, n int) (string, linearizability.Outcome, error) {
	task := fmt.Sprintf("task-%d-%d", c.ID(), n)
	if w.cfg.SubmitWaitEvery == 0 || r.IntN(w.cfg.SubmitWaitEvery) != 0 {
		return c.Submit(ctx, task, w.params(c.ID(), n, r, false))
	}
	long := w.cfg.LongWaitEvery > 0 && r.IntN(w.cfg.LongWaitEvery) == 0
	id, out, err := c.SubmitWait(ctx, task, w.params(c.ID(), n, r, long), w.cfg.SubmitWait)
	if out.Outcome == linearizability.Deadline {
		out.Outcome = linearizability.OK // admitted
	}
	return id, out.Outcome, err
}

func (w *httpWorkload) submitter(ctx context.Context, c *HTTPClient, r *rand.Rand) {
	bg := context.Background()
	var racers []*HTTPClient // of its keyed races (keyed.go)
	for n := 0; w.More(ctx); n++ {
		if w.cfg.KeyedEvery > 0 && r.IntN(w.cfg.KeyedEvery) == 0 {
			w.submitKeyed(bg, c, &racers, r)
			continue
		}
		id, outcome, err := w.submit(bg, c, r, n)
		w.countSubmit(id, outcome, err)
	}
}

// countSubmit counts what a submit got back: a lost reply, a job accepted
// (and remembered, for the readers and the drain), or a refusal, after
// which the submitter leaves the cores to the jobs a moment.
func (w *httpWorkload) countSubmit(id string, outcome linearizability.Outcome, err error) {
	switch {
	case err != nil:
		w.lost.Add(1)
	case outcome == linearizability.OK:
		w.Accept(id)
	default:
		w.Reject()
		time.Sleep(100 * time.Microsecond) // leave the cores to the jobs
	}
}

// poller reads recent jobs and now and then cancels one, racing the
// server's own terminal transition.
func (w *httpWorkload) poller(ctx context.Context, c *HTTPClient, r *rand.Rand) {
	bg := context.Background()
	first := true
	for w.More(ctx) {
		id := w.Pick(r, r.IntN(2) == 0)
		if id == "" {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		var err error
		walk := first || r.IntN(walkEvery) == 0
		first = false
		if walk && w.walks.Add(1) <= maxWalks {
			// A walk cut short by a kill or a lost reply is dropped (it
			// records no operation); one that never ends is a violation,
			// which Walk records.
			_ = c.Walk(bg)
			continue
		}
		switch k := r.IntN(20); {
		case k < 10:
			_, err = c.Snapshot(bg, id)
		case k < 18:
			_, err = c.Result(bg, id)
		default:
			_, err = c.Cancel(bg, id)
		}
		if err != nil {
			w.lost.Add(1)
		}
	}
}

// waiter waits on the newest job, mostly with WaitTimeout, now and then
// until it ends.
func (w *httpWorkload) waiter(ctx context.Context, c *HTTPClient, r *rand.Rand) {
	bg := context.Background()
	for w.More(ctx) {
		id := w.Pick(r, r.IntN(4) != 0)
		if id == "" {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		timeout := w.cfg.WaitTimeout.Truncate(time.Millisecond)
		if r.IntN(4) == 0 {
			timeout = w.cfg.Grace.Truncate(time.Millisecond)
		}
		if _, err := c.Wait(bg, id, timeout); err != nil {
			w.lost.Add(1)
		}
	}
}
