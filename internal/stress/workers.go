package stress

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The workers of a stress of one ledger (Run, Drive): what each kind of
// client does through its recording Client until the run ends, and what
// each checks as it goes, which holds of every correct ledger.

// workload is the shared state of one stress run's workers.
type workload struct {
	*Tally
	ledger Ledger          // what the workers drive, for the keyed races' clients
	calls  context.Context // of every call but a Wait: Drive's, never the run's
	jobs   chan string     // accepted ids, for the runners
	freed  chan struct{}   // a runner ended a job (Config.WaitForSlot)
	enough chan struct{}   // closed when MinAccepted jobs were accepted
	inWait atomic.Int64    // waiters inside an unbounded Wait

	wins         sync.Map // accepted id -> *atomic.Int32, its calls that ended it
	polls, waits atomic.Int64
	violations
}

// violations collects what the workers saw go wrong: the first few in
// full, and how many there were. Safe for concurrent use.
type violations struct {
	mu    sync.Mutex // guards the fields below
	first []string
	n     int
}

const keptViolations = 20

func (v *violations) violate(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.n < keptViolations {
		v.first = append(v.first, fmt.Sprintf(format, args...))
	}
	v.n++
}

func (v *violations) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := append([]string(nil), v.first...)
	if v.n > len(v.first) {
		out = append(out, fmt.Sprintf("and %d more violation(s) seen while running", v.n-len(v.first)))
	}
	return out
}

// expect records a violation unless err is nil or one of allowed. A call
// that panicked is the panic log's to report.
func (w *workload) expect(call, id string, err error, allowed ...error) {
	if err == nil || errors.Is(err, errPanicked) {
		return
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return
		}
	}
	w.violate("%s(%s): %v", call, id, err)
}

// cancelled are the errors a runner's call may meet when pollers cancel
// jobs (Config.CancelEvery): the job ended, and may be evicted.
func (w *workload) cancelled() []error {
	if w.cfg.CancelEvery == 0 {
		return nil
	}
	return []error{ledgertype.ErrTerminal, ledgertype.ErrNotPending, ledgertype.ErrNotFound}
}

// submitter submits until the run ends: one submit in KeyedEvery keyed
// (keyed.go), the others plainly. The first (i 0) calls Config.Tick before
// every other submit.
func (w *workload) submitter(ctx context.Context, i int, c *Client, r *rand.Rand) {
	bg := w.calls
	var racers []*Client // of its keyed races
	for n := 0; w.More(ctx); n++ {
		if i == 0 && w.cfg.Tick != nil && n%2 == 0 {
			w.cfg.Tick()
		}
		if w.cfg.KeyedEvery > 0 && r.IntN(w.cfg.KeyedEvery) == 0 {
			w.submitKeyed(ctx, bg, c, &racers, r)
			continue
		}
		id, err := c.Submit(bg, fmt.Sprintf("task-%d-%d", c.ID(), n), fmt.Sprintf("req-%d-%d", c.ID(), n))
		w.countSubmit(ctx, id, err)
	}
}

// countSubmit counts what a submit got back: a job accepted (its id must
// be new; remembered, for the readers, and queued for the runners) or a
// refusal at the bound, after which the submitter yields, or waits for a
// freed slot (Config.WaitForSlot) or the end of the run.
func (w *workload) countSubmit(ctx context.Context, id string, err error) {
	if err != nil {
		w.expect("Submit", "", err, ledgertype.ErrQueueFull)
		w.rejected.Add(1)
		if !w.cfg.WaitForSlot {
			runtime.Gosched()
			return
		}
		select {
		case <-w.freed:
		case <-ctx.Done():
		}
		return
	}
	if _, dup := w.wins.LoadOrStore(id, new(atomic.Int32)); dup {
		w.violate("id %s returned by more than one Submit", id)
		return
	}
	if w.Accept(id) == int64(w.cfg.MinAccepted) {
		close(w.enough)
	}
	w.jobs <- id
}

// ended counts a call that ended job id.
func (w *workload) ended(id string) {
	n, _ := w.wins.LoadOrStore(id, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

// submitKeyed sends the run's next keyed submit through c, or, the first
// of a fresh key, KeyRace of them at once through c and the racing
// clients. A key's request is "req-" and its name, its digest the
// request itself: equal requests, equal digests.
func (w *workload) submitKeyed(runCtx, ctx context.Context, c *Client, racers *[]*Client, r *rand.Rand) {
	t := w.keyed.next(w.cfg.Keys, r)
	req := "req-" + t.Name
	if t.Other {
		req += "-other"
	}
	send := func(c *Client) {
		id, replayed, err := c.SubmitKeyed(ctx, t.Name, req, "task-"+t.Name, req)
		switch {
		case errors.Is(err, ledgertype.ErrKeyConflict):
			w.keyed.conflicts.Add(1)
		case err == nil && replayed:
			w.keyed.replays.Add(1)
		default:
			w.countSubmit(runCtx, id, err)
		}
	}
	if !t.Race {
		send(c)
		return
	}
	for len(*racers) < KeyRace-1 {
		*racers = append(*racers, w.rec.Client(w.ledger))
	}
	Race(c, *racers, send)
}

// runner plays the worker pool: it takes each accepted job's request,
// starts it and ends it, each of which must succeed unless a poller
// cancelled the job, and now and then repeats a call that must be refused
// (a second TakeRequest, a second terminal call, a Start after the end).
// It runs until the queue of accepted jobs is closed and drained.
func (w *workload) runner(c *Client, r *rand.Rand) {
	bg := w.calls
	gone := []error{ledgertype.ErrTerminal, ledgertype.ErrNotFound}
	for id := range w.jobs {
		_, err := c.TakeRequest(bg, id)
		w.expect("TakeRequest", id, err, w.cancelled()...)
		if r.IntN(4) == 0 {
			_, err := c.TakeRequest(bg, id)
			w.expect("second TakeRequest", id, refused(err), append(gone, ledgertype.ErrRequestTaken)...)
		}
		w.expect("Start", id, c.Start(bg, id), w.cancelled()...)
		runtime.Gosched() // let readers see RUNNING
		var end error
		switch k := r.IntN(10); {
		case k < 7:
			end = c.Finish(bg, id, "res-"+id)
		case k < 9:
			end = c.Fail(bg, id, "failed-"+id)
		default:
			end = c.Timeout(bg, id, "deadline-"+id)
		}
		if end == nil {
			w.ended(id)
		}
		w.expect("ending", id, end, w.cancelled()...)
		select {
		case w.freed <- struct{}{}:
		default:
		}
		if r.IntN(4) == 0 {
			err := c.Timeout(bg, id, "late-"+id)
			if err == nil {
				w.ended(id)
			}
			w.expect("second terminal call", id, refused(err), gone...)
		}
		if r.IntN(8) == 0 {
			w.expect("Start after the end", id, refused(c.Start(bg, id)), ledgertype.ErrNotPending, ledgertype.ErrNotFound)
		}
	}
}

// errAccepted stands for a call that must be refused and was not.
var errAccepted = errors.New("accepted, want a refusal")

// refused is err, or errAccepted for a nil one.
func refused(err error) error {
	if err == nil {
		return errAccepted
	}
	return err
}

// poller reads recent jobs, and checks what it reads: a snapshot no
// correct ledger can show, a job going back to PENDING or out of a
// terminal state (State, the cheap poll, included), a result that is
// not the one its job ended with. One poll in CancelEvery cancels the
// job instead (a Timeout that races the runners' terminal calls).
func (w *workload) poller(ctx context.Context, c *Client, r *rand.Rand) {
	bg := w.calls
	last := make(map[string]ledgertype.State)
	observe := func(id string, s ledgertype.State) {
		if prev, ok := last[id]; ok && prev != s && (prev.Terminal() || s == ledgertype.Pending) {
			w.violate("job %s went back from %v to %v", id, prev, s)
		}
		last[id] = s
	}
	for w.More(ctx) {
		id := w.pick(r, false)
		if id == "" {
			runtime.Gosched()
			continue
		}
		switch {
		case w.cfg.CancelEvery > 0 && r.IntN(w.cfg.CancelEvery) == 0:
			err := c.Timeout(bg, id, "cancelled-"+id)
			if err == nil {
				w.ended(id)
			}
			w.expect("cancel", id, err, ledgertype.ErrTerminal, ledgertype.ErrNotFound)
		case r.IntN(2) == 0:
			snap, err := c.Snapshot(bg, id)
			if err != nil {
				w.expect("Snapshot", id, err, ledgertype.ErrNotFound)
				break
			}
			w.polls.Add(1)
			if err := Possible(snap); err != nil {
				w.violate("a poller saw an impossible snapshot: %v", err)
			}
			observe(id, snap.State)
			st, err := c.State(bg, id)
			if err == nil {
				observe(id, st) // the cheap poll never runs behind a snapshot
			}
			w.expect("State", id, err, ledgertype.ErrNotFound)
		default:
			res, snap, err := c.Result(bg, id)
			switch {
			case err == nil && res != "res-"+id:
				w.violate("job %s: DONE with result %q", id, res)
			case errors.Is(err, ledgertype.ErrNotDone) && snap.State == ledgertype.Done:
				w.violate("job %s: ErrNotDone with state DONE", id)
			case err == nil, errors.Is(err, ledgertype.ErrNotDone):
				w.polls.Add(1)
			default:
				w.expect("Result", id, err, ledgertype.ErrNotFound)
			}
		}
		runtime.Gosched() // leave the cores to submitters and runners
	}
}

// Possible reports why a snapshot shows a job no correct ledger can hold:
// a completion time exactly when terminal, an error exactly when FAILED
// or TIMEOUT, a start time when RUNNING, timestamps in order.
func Possible(s ledgertype.Snapshot) error {
	switch {
	case s.State.Terminal() == s.CompletedAt.IsZero():
		return fmt.Errorf("%s: %v with completion time %v", s.ID, s.State, s.CompletedAt)
	case (s.State == ledgertype.Failed || s.State == ledgertype.TimedOut) != (s.Err != nil):
		return fmt.Errorf("%s: %v with error %v", s.ID, s.State, s.Err)
	case s.State == ledgertype.Running && s.StartedAt.IsZero():
		return fmt.Errorf("%s: RUNNING without a start time", s.ID)
	case !s.StartedAt.IsZero() && s.StartedAt.Before(s.CreatedAt),
		!s.CompletedAt.IsZero() && s.CompletedAt.Before(s.CreatedAt),
		!s.CompletedAt.IsZero() && !s.StartedAt.IsZero() && s.CompletedAt.Before(s.StartedAt):
		return fmt.Errorf("%s: timestamps out of order: created %v, started %v, completed %v",
			s.ID, s.CreatedAt, s.StartedAt, s.CompletedAt)
	}
	return nil
}

// waiter waits on a recent job, mostly the newest, alternately with a
// short deadline of its own and with none (stopped only by waitCtx, which
// ends when Grace runs out at the end of the run). A Wait that returns
// without an error must return the job ended.
func (w *workload) waiter(ctx, waitCtx context.Context, c *Client, r *rand.Rand) {
	for n := 0; w.More(ctx); n++ {
		id := w.pick(r, r.IntN(4) != 0)
		if id == "" {
			runtime.Gosched()
			continue
		}
		var snap ledgertype.Snapshot
		var err error
		if n%2 == 0 {
			w.inWait.Add(1)
			snap, err = c.Wait(waitCtx, id)
			w.inWait.Add(-1)
		} else {
			wctx, cancel := context.WithTimeout(waitCtx, w.cfg.WaitTimeout)
			snap, err = c.Wait(wctx, id)
			cancel()
		}
		switch {
		case err == nil:
			w.waits.Add(1)
			if !snap.State.Terminal() {
				w.violate("Wait(%s) returned a live job: %v", id, snap.State)
			}
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		default:
			w.expect("Wait", id, err, ledgertype.ErrNotFound)
		}
		runtime.Gosched()
	}
}
