package stress

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/linearizability"
)

// Walks of the listing (GET /jobs) are recorded beside the history, not in
// it: a page reads every retained job at once and fits no porcupine model
// (see linearizability.CheckWalk), so a walk is checked against the
// admissions and reads of the history around it.

// walkLimit is the page size of a recorded walk: the most a page holds.
const walkLimit = 100

// walkPages bounds a recorded walk.
const walkPages = 1000

// Walks returns the walks recorded so far that reached their last page, in
// the order they ended. A walk cut short by an error is not kept.
//
// WalkViolations lists the walks that did not reach their last page in
// walkPages pages: a listing whose cursor never reaches the end.
func (r *Recorder) Walks() []linearizability.Walk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]linearizability.Walk(nil), r.walks...)
}

func (r *Recorder) WalkViolations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.walkViolations...)
}

func (r *Recorder) addWalk(w linearizability.Walk) {
	r.mu.Lock()
	r.walks = append(r.walks, w)
	r.mu.Unlock()
}

// Walk walks GET /jobs from its first page to its last, pages of
// walkLimit, and records the walk (the ids of each page, the call of the
// first and the return of the last, on the recorder's clock). A walk that
// fails is not recorded; one that exceeds walkPages is recorded as a
// violation (Recorder.WalkViolations).
func (h *HTTPClient) Walk(ctx context.Context) error {
	walk := linearizability.Walk{Call: h.c.clock.Now()}
	q := client.ListQuery{Limit: walkLimit}
	for range walkPages {
		p, err := h.api.List(ctx, q)
		if err != nil {
			return err
		}
		ids := make([]string, len(p.Jobs))
		for i, s := range p.Jobs {
			ids[i] = s.JobID
		}
		walk.Pages = append(walk.Pages, ids)
		if p.NextCursor == "" {
			walk.Return = h.c.clock.Now()
			h.c.rec.addWalk(walk)
			return nil
		}
		q.Cursor = p.NextCursor
	}
	h.c.rec.mu.Lock()
	h.c.rec.walkViolations = append(h.c.rec.walkViolations, fmt.Sprintf("a walk of GET /jobs called at %d did not reach its last page in %d pages", walk.Call, walkPages))
	h.c.rec.mu.Unlock()
	return errWalkTooLong
}

var errWalkTooLong = errors.New("stress: a walk of the listing did not reach its last page")
