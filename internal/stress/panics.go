package stress

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// errPanicked is what a guarded call returns when the ledger panicked in
// it: no sentinel, so the recorder keeps the call pending forever (its
// effect unknown), and the run reports the panic as a violation.
var errPanicked = errors.New("stress: the ledger panicked in the call")

// panicLog counts the panics a guarded ledger recovered, and keeps the
// first. It is safe for concurrent use.
type panicLog struct {
	mu    sync.Mutex // guards n and first
	n     int
	first string
}

// recovered records the panic value p, if there is one, naming the call,
// and sets *err to errPanicked. Deferred by every guarded call.
func (p *panicLog) recovered(call string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.first = fmt.Sprintf("%s: %v", call, v)
	}
	p.n++
	*err = errPanicked
}

// violation describes the panics recovered, or returns "" if there were
// none.
func (p *panicLog) violation() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d ledger call(s) panicked, the first in %s", p.n, p.first)
}

// guarded is a Ledger whose calls recover a panic of l: a ledger that
// panics (a terminal job ended twice closes its wakeup channel twice) is
// a finding of the run, a violation, not a crash of the driver with no
// verdict. The table's calls release their locks by defer, so the run
// goes on after one.
type guarded struct {
	l   Ledger
	log *panicLog
}

var _ Ledger = guarded{}

func (g guarded) Submit(ctx context.Context, taskID, req string) (id string, err error) {
	defer g.log.recovered("Submit", &err)
	return g.l.Submit(ctx, taskID, req)
}

func (g guarded) SubmitKeyed(ctx context.Context, key, digest, taskID, req string) (id string, replayed bool, err error) {
	defer g.log.recovered("SubmitKeyed", &err)
	return g.l.SubmitKeyed(ctx, key, digest, taskID, req)
}

func (g guarded) TakeRequest(ctx context.Context, id string) (req string, err error) {
	defer g.log.recovered("TakeRequest", &err)
	return g.l.TakeRequest(ctx, id)
}

func (g guarded) Start(ctx context.Context, id string) (err error) {
	defer g.log.recovered("Start", &err)
	return g.l.Start(ctx, id)
}

func (g guarded) Finish(ctx context.Context, id, res string) (err error) {
	defer g.log.recovered("Finish", &err)
	return g.l.Finish(ctx, id, res)
}

func (g guarded) Fail(ctx context.Context, id, msg string) (err error) {
	defer g.log.recovered("Fail", &err)
	return g.l.Fail(ctx, id, msg)
}

func (g guarded) Timeout(ctx context.Context, id, msg string) (err error) {
	defer g.log.recovered("Timeout", &err)
	return g.l.Timeout(ctx, id, msg)
}

func (g guarded) Snapshot(ctx context.Context, id string) (snap jobtable.Snapshot, err error) {
	defer g.log.recovered("Snapshot", &err)
	return g.l.Snapshot(ctx, id)
}

func (g guarded) State(ctx context.Context, id string) (st ledgertype.State, err error) {
	defer g.log.recovered("State", &err)
	return g.l.State(ctx, id)
}

func (g guarded) Wait(ctx context.Context, id string) (snap jobtable.Snapshot, err error) {
	defer g.log.recovered("Wait", &err)
	return g.l.Wait(ctx, id)
}

func (g guarded) Result(ctx context.Context, id string) (res string, snap jobtable.Snapshot, err error) {
	defer g.log.recovered("Result", &err)
	return g.l.Result(ctx, id)
}
