package linearizability

import (
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// CheckRecordedWalks checks walks recorded through the HTTP API beside
// history, the HTTP history of the same run, with CheckWalk: the jobs of
// each walk are those the history admitted (a 202, a waiting submit's
// 200 or 202, or a job's first keyed 202s, from the earliest call to the
// earliest return among them: its KeyedAdmit, httpkeys.go), each held
// after the walk when a read or a keyed 202 called after its last page
// returned found it, or, where retention evicts nothing (retained, as in
// the crash and replicas tests), every one of them. A POST whose reply was
// lost may have admitted a job nobody can name: a walk may list as many
// such jobs as there were POSTs of unknown outcome called before it ended
// (but for keyed ones called after their key was held for good, which
// created nothing: lostOnHeldKey), each taken as admitted at the start of
// the run and not known to be held (so it is never owed to a walk, and
// never breaks the order). It returns the first walk's violations, with
// the walk's number, or nil.
func CheckRecordedWalks(history []porcupine.Operation, walks []Walk, retained bool) error {
	jobs := map[string]WalkJob{}
	lastFound := map[string]int64{}
	var lost []int64 // calls of POSTs of unknown outcome, in order
	keyed := deriveKeyed(history, retained)
	for _, op := range keyed.ops {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case admitted(in, out):
			if _, ok := jobs[out.ID]; !ok { // the admission, the first POST naming it
				jobs[out.ID] = WalkJob{ID: out.ID, SubmitCall: op.Call, SubmitReturn: op.Return}
			}
		case in.Kind.posts() && out.Outcome == Unknown:
			if !lostOnHeldKey(keyed.held, op) {
				lost = append(lost, op.Call)
			}
		case in.Kind == SubmitKeyed && out.Outcome == OK: // the job exists and is retained
			lastFound[out.ID] = max(lastFound[out.ID], op.Call)
		case !in.Kind.posts() && in.ID != "" && out.Outcome != Unknown && out.Outcome != NotFound:
			lastFound[in.ID] = max(lastFound[in.ID], op.Call)
		}
	}
	slices.Sort(lost) // history need not be in call order
	for i, w := range walks {
		listed := map[string]bool{}
		var unknown []string
		for _, page := range w.Pages {
			for _, id := range page {
				if _, ok := jobs[id]; !ok && !listed[id] {
					unknown = append(unknown, id)
				}
				listed[id] = true
			}
		}
		walkJobs := make([]WalkJob, 0, len(jobs)+len(unknown))
		for id, j := range jobs {
			j.HeldAfter = retained || lastFound[id] > w.Return
			walkJobs = append(walkJobs, j)
		}
		if len(unknown) <= lostBefore(lost, w.Return) {
			for _, id := range unknown {
				walkJobs = append(walkJobs, WalkJob{ID: id, SubmitCall: 0, SubmitReturn: Pending})
			}
		}
		if err := CheckWalk(w, walkJobs); err != nil {
			return fmt.Errorf("walk %d of %d (%d pages): %w", i+1, len(walks), len(w.Pages), err)
		}
	}
	return nil
}

// lostBefore returns how many of calls (in order) come before t.
func lostBefore(calls []int64, t int64) int {
	n := 0
	for n < len(calls) && calls[n] < t {
		n++
	}
	return n
}
