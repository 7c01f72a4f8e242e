package linearizability

import (
	"errors"
	"fmt"
)

// Walks of the listing (ledger.Ledger.List, GET /jobs) are checked here by
// a validator of their own, not by a porcupine model. The models are
// partitioned by job (JobModel) or by key (KeyModel) because a global
// search is exponential in the concurrent operations; a page reads every
// retained job at once, so a List operation belongs to no partition, and a
// global model that holds the set of retained jobs would have to guess
// every unseen eviction. What a walk promises is not a state of one job
// but a property of the walk (spec/Listing.tla): no job listed twice, none
// skipped that was retained throughout, newest first. So CheckWalk checks
// a recorded walk against the admissions and reads recorded around it, as
// etcd's robustness tests check watches with validators beside their
// porcupine model.

// WalkJob is what a recorder saw of one job around a walk.
type WalkJob struct {
	ID string
	// SubmitCall and SubmitReturn bound the Submit that admitted the job,
	// on the recorder's clock (Return = Pending if it never returned).
	SubmitCall, SubmitReturn int64
	// HeldAfter says that a read called after the walk's last page
	// returned found the job: retention evicts for ever, so a job
	// admitted before the walk and held after it was retained throughout.
	HeldAfter bool
}

// Walk is one walk of pages, in order, as a client saw it.
type Walk struct {
	// Call is when the first page was called, Return when the last page
	// returned, on the recorder's clock.
	Call, Return int64
	// Pages are the ids each page listed, in order.
	Pages [][]string
}

// The ways a walk can break its promises, named as the invariants of
// spec/Listing.tla.
var (
	ErrWalkDuplicate   = errors.New("linearizability: NoDuplicateInv: a job listed twice in one walk")
	ErrWalkSkipped     = errors.New("linearizability: NoSkipInv: a job retained throughout the walk was not listed")
	ErrWalkNotNewest   = errors.New("linearizability: NewestFirstInv: a job listed before one admitted after it")
	ErrWalkUnknownItem = errors.New("linearizability: the walk lists a job nobody submitted")
)

// CheckWalk checks w against the jobs recorded around it and returns every
// violation, joined, or nil:
//   - no id is listed twice;
//   - every job whose Submit returned before the walk's first page was
//     called, and which was held after the walk (HeldAfter), is listed;
//   - of two listed jobs where one's Submit returned before the other's was
//     called, the newer is listed first;
//   - every listed id is a job of jobs (one whose Submit was at least
//     called before the page that listed it returned is all a store can
//     list, and the recorder knows every such job).
func CheckWalk(w Walk, jobs []WalkJob) error {
	byID := make(map[string]WalkJob, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	var errs []error
	at := map[string]int{} // id -> its place in the walk
	var order []string
	for p, page := range w.Pages {
		for _, id := range page {
			if _, ok := byID[id]; !ok {
				errs = append(errs, fmt.Errorf("%w: %s on page %d", ErrWalkUnknownItem, id, p+1))
				continue
			}
			if first, ok := at[id]; ok {
				errs = append(errs, fmt.Errorf("%w: %s at %d and again on page %d", ErrWalkDuplicate, id, first+1, p+1))
				continue
			}
			at[id] = len(order)
			order = append(order, id)
		}
	}
	for _, j := range jobs {
		if j.SubmitReturn < w.Call && j.HeldAfter {
			if _, ok := at[j.ID]; !ok {
				errs = append(errs, fmt.Errorf("%w: %s", ErrWalkSkipped, j.ID))
			}
		}
	}
	for i, id := range order {
		newer := byID[id]
		for _, older := range order[i+1:] {
			// listed: id, then older. Wrong if older's Submit began after
			// id's returned, that is, older is in fact the newer job.
			if o := byID[older]; newer.SubmitReturn < o.SubmitCall {
				errs = append(errs, fmt.Errorf("%w: %s (admitted first) before %s", ErrWalkNotNewest, id, older))
			}
		}
	}
	return errors.Join(errs...)
}
