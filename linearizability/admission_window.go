package linearizability

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// admissionVerdict is what decideAdmission found.
type admissionVerdict struct {
	Linearizable bool
	// Unsupported, when set, says why the sweep does not cover the
	// projection; the caller then checks it with porcupine.
	Unsupported string
	// Window is, on a violation, a small history that the model rejects
	// on its own: the operations around the place where the sweep failed,
	// started from one of the states reachable there. Where names its
	// span; Message says what failed.
	Window         []porcupine.Operation
	Where, Message string
	// Instants and Peak size the sweep: the call times it walked and the
	// most states it held at one of them.
	Instants, Peak int
}

// sweepAdmission decides proj, the admission projection for model, with
// the sweep and fills rep, drawing a violation's window as checkModel
// draws a failing partition. It reports false, with rep.AdmissionMethod
// saying why, when the sweep does not cover proj.
func sweepAdmission(rep Report, cfg CheckConfig, model porcupine.Model, proj []porcupine.Operation, http bool) (Report, bool) {
	start := time.Now()
	v := decideAdmission(proj, cfg.MaxQueue, http)
	rep.AdmissionCheck = time.Since(start)
	if v.Unsupported != "" {
		rep.AdmissionMethod = "porcupine, as the sweep does not cover " + v.Unsupported
		return rep, false
	}
	rep.AdmissionMethod, rep.AdmissionStates = "sweep", v.Peak
	if !v.Linearizable {
		model.Partition = nil
		rep = violation(rep, cfg, model, "admission", "the window "+v.Where, v.Window)
		rep.Message += ": " + v.Message
	}
	return rep, true
}

// windowOps is about how many operations a violation's window shows.
const windowOps = 24

// decideAdmission decides whether proj, the admission projection of a
// table-level history (http false) or an HTTP-level one, is linearizable
// for AdmissionModel(maxQueue) or HTTPAdmissionModel(maxQueue), by the
// sweep of admission_decide.go.
func decideAdmission(proj []porcupine.Operation, maxQueue int, http bool) admissionVerdict {
	build := tableProblem
	if http {
		build = httpProblem
	}
	p, imp, unsupported := build(proj, maxQueue)
	switch {
	case unsupported != "":
		return admissionVerdict{Unsupported: unsupported}
	case imp != nil:
		var win []porcupine.Operation
		for _, i := range imp.ops {
			win = append(win, proj[i])
		}
		sortByCall(win)
		return admissionVerdict{Window: win, Where: fmt.Sprintf("at time %d", win[0].Call), Message: imp.why}
	}
	r := newSweeper(p).run(-1)
	v := admissionVerdict{Instants: len(p.times), Peak: r.peak}
	switch {
	case r.giveUp != "":
		v.Unsupported = r.giveUp
	case r.ok:
		v.Linearizable = true
	default:
		v.Window, v.Where, v.Message = p.window(proj, r.failAt, http)
	}
	return v
}

// window returns the operations called from an instant j shortly before
// the failing instant k up to k, with those still in flight at j, started
// from one state s reachable at j: a set-depth at the table level, a 202 per
// live job at the HTTP level. Started from s, the sweep fails by k (every
// state of k descends from one of j), so the window is not linearizable:
// it holds every operation the sweep saw between j and k, with the same
// instants, and only adds what narrows it (the later reads of its jobs).
func (p *dproblem) window(proj []porcupine.Operation, k int32, http bool) (win []porcupine.Operation, where, msg string) {
	j, n := k, 0
	for j > 0 && n < windowOps {
		n += len(p.rel.at(j))
		j--
	}
	w := newSweeper(p)
	w.run(j)
	states := w.cur.list
	s := states[0]
	tj, tk := p.times[j], p.times[k]

	in := make(map[int32]bool) // projection indices taken
	take := func(i int32) {
		if in[i] {
			return
		}
		in[i] = true
		op := proj[i]
		op.Call = max(op.Call, tj)
		win = append(win, op)
	}
	skip := make(map[int32]bool) // done in s, or a live job's earlier reads
	var from string
	if http {
		for n, ops := range p.jobOps {
			job := int32(n)
			inc := p.jobInc[job]
			switch {
			case liveHas(s.live, job):
				a := proj[p.ops[inc].src]
				win = append(win, porcupine.Operation{
					ClientId: endClientBase - 1 - len(win),
					Input:    Input{Kind: Submit, TaskID: "live at the window's start"},
					Output:   Output{Outcome: OK, ID: a.Output.(Output).ID},
					Call:     tj - 1, Return: tj - 1,
				})
				// Its End, and the reads that may still narrow the End.
				for _, i := range ops {
					switch {
					case i == p.ops[inc].src:
						skip[i] = true
					case proj[i].Input.(Input).Kind == End || proj[i].Call >= tj:
						take(i)
					default:
						skip[i] = true
					}
				}
			case w.isDone(s, inc): // ended before j
				for _, i := range ops {
					skip[i] = true
				}
			case p.ops[inc].ri <= k || slices.ContainsFunc(ops, func(i int32) bool { return proj[i].Call <= tk }):
				for _, i := range ops {
					take(i)
				}
			}
		}
		from = fmt.Sprintf("with %d live jobs", len(s.live)/4)
	} else {
		win = append(win, porcupine.Operation{
			ClientId: endClientBase - 1,
			Input:    Input{Kind: SetDepth, Depth: int(s.c)},
			Output:   Output{Outcome: OK},
			Call:     tj - 1, Return: tj - 1,
		})
		from = fmt.Sprintf("at depth %d", s.c)
		up, down := w.upCalled-s.up, w.downCalled-s.down
		for i := int32(len(p.ops)) - 1; i >= 0; i-- {
			op := p.ops[i]
			switch {
			case op.ri >= j:
			case op.kind == dOptInc && up > 0:
				up--
				take(op.src)
			case op.kind == dOptDec && down > 0:
				down--
				take(op.src)
			}
		}
	}
	for i, op := range p.ops {
		if op.ri < j && op.mandatory() && op.job < 0 && max(op.di, op.ri) >= j && !w.isDone(s, int32(i)) {
			take(op.src)
		}
	}
	for i, op := range proj {
		if op.Call >= tj && op.Call <= tk && op.Input.(Input).Kind != SetDepth && !skip[int32(i)] {
			take(int32(i))
		}
	}
	sortByCall(win)
	var alt []string
	for _, x := range states[:min(len(states), 8)] {
		if http {
			alt = append(alt, fmt.Sprint(len(x.live)/4))
		} else {
			alt = append(alt, fmt.Sprint(x.c))
		}
	}
	if len(states) > len(alt) {
		alt = append(alt, "...")
	}
	where = fmt.Sprintf("[%d, %d]", tj, tk)
	msg = fmt.Sprintf("no linearization survives time %d (instant %d of %d); the window starts %s, one of %d states reachable at time %d (live or depth: %s)",
		tk, k+1, len(p.times), from, len(states), tj, strings.Join(alt, " "))
	return win, where, msg
}
