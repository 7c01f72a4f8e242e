package stress

import (
	"context"
	"errors"

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
func (r *Recorder) Walks() []linearizability.Walk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]linearizability.Walk(nil), r.walks...)
}

func (r *Recorder) addWalk(w linearizability.Walk) {
	r.mu.Lock()
	r.walks = append(r.walks, w)
	r.mu.Unlock()
}

// Walk walks GET /jobs from its first page to its last, pages of
// walkLimit, and records the walk (the ids of each page, the call of the
// first and the return of the last, on the recorder's clock). It returns
// the pages it walked; a walk that fails or exceeds walkPages is not
// recorded.
func (h *HTTPClient) Walk(ctx context.Context) (int, error) {
	walk := linearizability.Walk{Call: h.c.clock.Now()}
	q := client.ListQuery{Limit: walkLimit}
	for range walkPages {
		p, err := h.api.List(ctx, q)
		if err != nil {
			return len(walk.Pages), err
		}
		ids := make([]string, len(p.Jobs))
		for i, s := range p.Jobs {
			ids[i] = s.JobID
		}
		walk.Pages = append(walk.Pages, ids)
		if p.NextCursor == "" {
			walk.Return = h.c.clock.Now()
			h.c.rec.addWalk(walk)
			return len(walk.Pages), nil
		}
		q.Cursor = p.NextCursor
	}
	return len(walk.Pages), errWalkTooLong
}

var errWalkTooLong = errors.New("stress: a walk of the listing did not reach its last page")
