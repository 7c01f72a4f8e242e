package httpstress

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/linearizability"
)

// The crash test's checks of what a restart kept (RunCrash): the reads of
// every acknowledged job at the start of each life, and the last life's
// drain. They are recorded like every other operation, so the history
// check judges them too; these checks say in plain words what went wrong.

// seenEnd is what the clients saw of a job that ended: its terminal state,
// and its error where a full view showed it.
type seenEnd struct {
	state    linearizability.State
	err      string
	errKnown bool
}

// endsSeen returns, for every job seen terminal in history, what was seen.
func endsSeen(history []porcupine.Operation) map[string]seenEnd {
	ends := make(map[string]seenEnd)
	for _, op := range history {
		in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
		if !linearizability.HasView(in.Kind, out.Outcome) || !out.State.Terminal() {
			continue
		}
		id := in.ID
		if in.Kind == linearizability.SubmitWait {
			id = out.ID // a 200 after the wait: the job it admitted
		}
		e := ends[id]
		e.state = out.State
		full := in.Kind == linearizability.Snapshot || in.Kind == linearizability.Wait ||
			in.Kind == linearizability.Cancel && out.Outcome == linearizability.OK ||
			in.Kind == linearizability.SubmitWait && out.Value == "" // a snapshot, not a result
		if full {
			e.err, e.errKnown = out.Err, true
		}
		ends[id] = e
	}
	return ends
}

// checkSurvivors reads every job acknowledged before this life and records
// a violation for each that is gone or whose seen end changed. It returns
// the number of jobs read.
func (w *httpWorkload) checkSurvivors(life int, res *stress.Record) int {
	ids := w.IDs()
	if len(ids) == 0 {
		return 0
	}
	ends := endsSeen(w.rec.History())
	var mu sync.Mutex
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(res.Violations) < 50 {
			res.Violations = append(res.Violations, fmt.Sprintf("after restart %d: ", life)+fmt.Sprintf(format, args...))
		}
	}
	w.eachJob(ids, func(c *HTTPClient, id string) {
		out, err := c.Snapshot(context.Background(), id)
		switch {
		case err != nil:
			w.lost.Add(1)
			report("GET /jobs/%s: %v", id, err)
		case out.Outcome == linearizability.NotFound:
			report("job %s, acknowledged with a 202, is gone", id)
		default:
			e, ok := ends[id]
			if ok && out.State != e.state {
				report("job %s was seen %v and now shows %v", id, e.state, out.State)
			}
			if ok && e.errKnown && out.Err != e.err {
				report("job %s was seen with error %q and now shows %q", id, e.err, out.Err)
			}
		}
	})
	return len(ids)
}

// eachJob calls f on every id, from 4 recording clients at once, each
// taking the next id until none is left, and returns when all are done.
func (w *httpWorkload) eachJob(ids []string, f func(c *HTTPClient, id string)) {
	var next atomic.Int64
	var clients sync.WaitGroup
	for range 4 {
		c := NewHTTPClient(w.rec, w.api)
		clients.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				f(c, ids[i])
			}
		})
	}
	clients.Wait()
}

// finalLife drains the last life: every acknowledged job must end within
// the job deadline counted from its admission, restarts or not, plus the
// time the server was down (down) and Grace (crashdeadline.go); no view of
// a job in any life may show it live after that; the queue depth must come
// back to zero, and the server must stop cleanly on SIGTERM.
func (w *httpWorkload) finalLife(ctx context.Context, srv *server, res *CrashResult, down []downtime) {
	start := time.Now()
	deadline := start.Add(w.cfg.JobTimeout + w.cfg.Grace)
	history := w.rec.History()
	admitted := admittedAt(history)
	ids := w.IDs()
	due := make(map[string]int64, len(ids))
	for _, id := range ids {
		if at, ok := admitted[id]; ok {
			due[id] = dueBy(at, w.cfg.JobTimeout, w.cfg.Grace, down)
		} else { // not reached: every remembered id was named by a recorded 202
			due[id] = w.rec.Clock().At(deadline)
		}
	}
	bound := fmt.Sprintf("the job deadline (%v) from its admission plus the time the server was down plus %v", w.cfg.JobTimeout, w.cfg.Grace)
	if n, late := lateViews(history, due); n > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d view(s) of an acknowledged job still live after %s", n, bound))
		res.Violations = append(res.Violations, late...)
	}
	var unended atomic.Int64
	w.eachJob(ids, func(c *HTTPClient, id string) {
		if !w.drainOne(ctx, c, id, w.rec.Clock().Time(due[id])) {
			unended.Add(1)
		}
	})
	if u := unended.Load(); u > 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("%d acknowledged job(s) not seen ended within %s", u, bound))
	}
	// Jobs whose 202 was lost in a kill are unknown to the clients; they
	// too must end by their deadline, which the depth shows.
	depth := -1
	for time.Now().Before(deadline) && ctx.Err() == nil {
		m, err := w.api.Metrics(ctx)
		if err != nil {
			res.Violations = append(res.Violations, "GET /metrics: "+err.Error())
			break
		}
		if depth = int(m["jobledger_queue_depth"]); depth == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if depth != 0 {
		res.Violations = append(res.Violations, fmt.Sprintf("queue depth %d, not 0, once every job's deadline had passed", depth))
	}
	if err := srv.stop(ctx, 10*time.Second); err != nil {
		res.Violations = append(res.Violations, err.Error())
	}
}
