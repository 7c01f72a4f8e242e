package stress

import "github.com/jobledger/jobledger/linearizability"

// Walks of a listing are recorded beside the history, not in it: a page
// reads every retained job at once and fits no porcupine model (see
// linearizability.CheckWalk), so a walk is checked against the admissions
// and reads of the history around it.

// AddWalk records a walk of the listing that reached its last page.
func (r *Recorder) AddWalk(w linearizability.Walk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.walks = append(r.walks, w)
}

// AddWalkViolation records a walk that did not reach its last page, as why.
func (r *Recorder) AddWalkViolation(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.walkViolations = append(r.walkViolations, why)
}

// Walks returns the walks recorded so far (AddWalk), in the order they
// ended.
func (r *Recorder) Walks() []linearizability.Walk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]linearizability.Walk(nil), r.walks...)
}

// WalkViolations lists the walks that did not reach their last page
// (AddWalkViolation).
func (r *Recorder) WalkViolations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.walkViolations...)
}
