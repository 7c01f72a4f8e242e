package httpstress

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/linearizability"
)

// walkLimit is the page size of a recorded walk: the most a page holds.
const walkLimit = 100

// walkPages bounds a recorded walk.
const walkPages = 1000

// Walk walks GET /jobs from its first page to its last, pages of
// walkLimit, and records the walk (the ids of each page, the call of the
// first and the return of the last, on the recorder's clock). A walk that
// fails is not recorded; one that exceeds walkPages is recorded as a
// violation (stress.Recorder.WalkViolations).
func (h *HTTPClient) Walk(ctx context.Context) error {
	walk := linearizability.Walk{Call: h.rec.Clock().Now()}
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
			walk.Return = h.rec.Clock().Now()
			h.rec.AddWalk(walk)
			return nil
		}
		q.Cursor = p.NextCursor
	}
	h.rec.AddWalkViolation(fmt.Sprintf("a walk of GET /jobs called at %d did not reach its last page in %d pages", walk.Call, walkPages))
	return errWalkTooLong
}

var errWalkTooLong = errors.New("httpstress: a walk of the listing did not reach its last page")
