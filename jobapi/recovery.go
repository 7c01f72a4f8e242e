package jobapi

import (
	"fmt"

	"github.com/jobledger/jobledger/ledger"
)

// runRecovered starts a runner for every job the store recovered: the jobs that
// were PENDING when an earlier process stopped, oldest first. Each runs as
// an admitted job does, with its deadline still counted from its
// admission, CreatedAt plus async_timeout; one already past it ends
// TIMEOUT at once, through its runner. The store's own restart ended the
// jobs that were RUNNING. A store that is no ledger.Recoverer (the memory
// store) recovers nothing.
//
// New calls it before the server is returned, so nothing is closed yet.
func (e *executor) runRecovered() error {
	r, ok := ledger.As[ledger.Recoverer](e.store)
	if !ok {
		return nil
	}
	pending, err := r.Recovered(e.writes)
	if err != nil {
		return fmt.Errorf("jobapi: reading the jobs the store recovered: %w", err)
	}
	now := e.clock.Now()
	for _, snap := range pending {
		if !e.enter() {
			break // unreachable: New has not returned the server yet
		}
		e.launch(snap.ID, snap.CreatedAt.Add(e.timeout).Sub(now))
	}
	if len(pending) > 0 {
		e.log.Info("recovered pending jobs", "jobs", len(pending))
	}
	return nil
}
