package fuzz

import (
	"errors"
	"fmt"
	"sync"

	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// peekErrors collects what unrecorded snapshots found.
type peekErrors struct {
	mu   sync.Mutex
	errs []error
}

// check takes a snapshot of job id without recording it, and checks that
// the view is one a job can be in: the state agrees with the error and the
// timestamps. The snapshot is taken outside the recorder on purpose: the
// recorder's clock orders every recorded operation that does not overlap
// another, which would hide from the race detector an unsynchronised read
// that a recorded transition races with.
func (p *peekErrors) check(table *jobtable.Table[string, string], id string) {
	snap, err := table.Snapshot(id)
	if err != nil {
		return // never issued, or evicted
	}
	if verr := viewError(snap); verr != nil {
		p.mu.Lock()
		p.errs = append(p.errs, fmt.Errorf("%s: %v in %s", id, verr, showSnapshot(snap)))
		p.mu.Unlock()
	}
}

func (p *peekErrors) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return errors.Join(p.errs...)
}

// viewError reports a snapshot whose fields disagree with its state.
func viewError(s jobtable.Snapshot) error {
	terminal := s.State == ledgertype.Done || s.State == ledgertype.Failed || s.State == ledgertype.TimedOut
	switch {
	case terminal == s.CompletedAt.IsZero():
		return fmt.Errorf("%s with completion time %s", s.State, clockTime(s.CompletedAt))
	case (s.State == ledgertype.Failed || s.State == ledgertype.TimedOut) != (s.Err != nil):
		return fmt.Errorf("%s with error %v", s.State, s.Err)
	case s.State == ledgertype.Running && s.StartedAt.IsZero():
		return errors.New("RUNNING with no start time")
	case s.State == ledgertype.Pending && !s.StartedAt.IsZero():
		return errors.New("PENDING with a start time")
	}
	return nil
}
