package httpstress

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/linearizability"
)

// The crash test's job deadlines (RunCrash). The server must end a job
// within async_timeout (JobTimeout) of its admission, restarts or not: a
// restart neither restarts nor forgets the deadline. A server that is down
// when a deadline falls can only keep it once it is back, so the time it was
// down is added; then a grace.
//
// The grace is HTTPConfig.Grace (10 s in DefaultCrashConfig), which must
// exceed RequestTimeout (validate). It covers, on a loaded 2-core machine:
//   - the admission itself, which the clients only bound from below: a job's
//     deadline is counted from the call time of the earliest 202 that named
//     it (the admitting POST, or a keyed replay that started before it),
//     and that call had its answer within RequestTimeout, so the server
//     admitted the job at most RequestTimeout after that call;
//   - the server's own lateness at a deadline: its timer firing, the end
//     committed, the waiter woken, under the load of the other clients.
//
// So a correct server never fails the check, while one that restarts a
// job's deadline at each start, or never keeps it, is caught as soon as a
// job outlives its deadline by more than the grace and the time the server
// was down.

// downtime is a time the server was down: from just before a kill to just
// after the next life was listening, in the history's clock.
type downtime struct{ from, to int64 }

// admittedAt returns, for every job a 202 named in history, the call time
// of the earliest such 202: Submit, SubmitKeyed (a replay over HTTP looks
// like a creation, so each keyed 202 may be the one that admitted the job)
// and SubmitWait, whether its wait saw the job end (200) or not (202).
func admittedAt(history []porcupine.Operation) map[string]int64 {
	at := make(map[string]int64)
	for _, op := range history {
		in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
		switch {
		case (in.Kind == linearizability.Submit || in.Kind == linearizability.SubmitKeyed) && out.Outcome == linearizability.OK:
		case in.Kind == linearizability.SubmitWait && (out.Outcome == linearizability.OK || out.Outcome == linearizability.Deadline):
		default:
			continue
		}
		if c, ok := at[out.ID]; !ok || op.Call < c {
			at[out.ID] = op.Call
		}
	}
	return at
}

// dueBy returns the time by which a job admitted at admitted must have
// ended: admitted plus timeout plus grace, plus every down time that falls
// before that point, which the down time itself pushes later. down is in
// time order.
func dueBy(admitted int64, timeout, grace time.Duration, down []downtime) int64 {
	due := admitted + int64(timeout+grace)
	for _, d := range down {
		if d.from >= due {
			break
		}
		if d.to > admitted {
			due += d.to - max(d.from, admitted)
		}
	}
	return due
}

// lateViews returns the number of views in history of a job still PENDING
// or RUNNING by a call made after the job was due (due, by id), and a
// violation for each of the first few.
func lateViews(history []porcupine.Operation, due map[string]int64) (int, []string) {
	n, late := 0, []string(nil)
	for _, op := range history {
		in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
		if !linearizability.HasView(in.Kind, out.Outcome) || out.State.Terminal() {
			continue
		}
		id := in.ID
		if in.Kind == linearizability.SubmitWait {
			id = out.ID
		}
		if d, ok := due[id]; ok && op.Call > d {
			if n++; n <= 10 {
				late = append(late, fmt.Sprintf("job %s seen %v by a call %v after it was due", id, out.State, time.Duration(op.Call-d)))
			}
		}
	}
	return n, late
}
