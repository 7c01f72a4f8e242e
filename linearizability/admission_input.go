package linearizability

import (
	"fmt"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"
)

// This file turns an admission projection into the counter problem that
// the sweep decides (admission_decide.go), following AdmissionModel's and
// HTTPAdmissionModel's Step functions case by case. A projection the sweep
// does not cover is reported as unsupported, and the caller falls back to
// porcupine; the projections of recorded histories are always covered.

// impossible is an operation that no linearization can place: its Step
// never accepts it, or its window is empty. ops is a small history that
// shows it, as indices into the projection.
type impossible struct {
	ops []int32
	why string
}

// tableProblem builds the problem of a table-level projection
// (AdmissionModel). It covers every projection except those with an
// unknown outcome that returned (the recorder keeps those pending forever)
// and those with a SetDepth other than one, non-negative, before every
// other operation.
func tableProblem(proj []porcupine.Operation, maxQueue int) (*dproblem, *impossible, string) {
	b := newBuilder(proj)
	setDepth := -1
	for i, op := range proj {
		in, out := op.Input.(Input), op.Output.(Output)
		var k dkind
		switch {
		case in.Kind == SetDepth:
			if setDepth >= 0 {
				return nil, nil, "more than one set-depth"
			}
			setDepth = i
			continue // not an instant: it is before every one

		case in.Kind == Submit && out.Outcome == OK:
			k = dInc
		case in.Kind == Submit && out.Outcome == QueueFull:
			k = dFull
		case in.Kind == Submit && out.Outcome == Unknown:
			k = dOptInc
		case in.Kind.Terminal() && out.Outcome == OK:
			k = dDec
		case in.Kind.Terminal() && out.Outcome == Unknown:
			k = dOptDec
		default:
			return nil, &impossible{ops: []int32{int32(i)}, why: "the model never accepts " + Describe(in, out)}, ""
		}
		if (k == dOptInc || k == dOptDec) && op.Return != Pending {
			return nil, nil, "an operation of unknown outcome that returned"
		}
		b.times = append(b.times, op.Call)
		b.add(k, -1, op.Call, op.Return, i)
	}
	init := 0
	if setDepth >= 0 {
		sd := proj[setDepth]
		init = sd.Input.(Input).Depth
		if init < 0 {
			return nil, nil, "a negative set-depth"
		}
		for i, op := range proj {
			if i != setDepth && op.Call <= sd.Return {
				return nil, nil, "a set-depth that is not before every other operation"
			}
		}
	}
	return b.build(maxQueue, init, nil), nil, ""
}

// httpProblem builds the problem of an HTTP-level projection
// (HTTPAdmissionModel): each job's 202 is an inc, its End an end, and its
// reads that saw it live narrow their windows (see admission_decide.go).
// It covers every projection in which no id is admitted twice.
func httpProblem(proj []porcupine.Operation, maxQueue int) (*dproblem, *impossible, string) {
	b := newBuilder(proj)
	type job struct {
		id                string
		incs, ends, reads []int32
	}
	ids := make(map[string]int)
	var jobs []job
	of := func(id string) *job {
		j, ok := ids[id]
		if !ok {
			j = len(jobs)
			ids[id] = j
			jobs = append(jobs, job{id: id})
		}
		return &jobs[j]
	}
	for i, op := range proj {
		in, out := op.Input.(Input), op.Output.(Output)
		b.times = append(b.times, op.Call)
		switch {
		case admitted(in, out):
			j := of(out.ID)
			j.incs = append(j.incs, int32(i))
		case in.Kind.posts() && out.Outcome == QueueFull:
			b.add(dFull, -1, op.Call, op.Return, i)
		case sawLive(in, out):
			j := of(in.ID)
			j.reads = append(j.reads, int32(i))
		case in.Kind == End:
			j := of(in.ID)
			j.ends = append(j.ends, int32(i))
		default:
			return nil, &impossible{ops: []int32{int32(i)}, why: "the model never accepts " + Describe(in, out)}, ""
		}
	}
	var jobOps [][]int32
	for _, j := range jobs { // in order of first appearance, not the map's
		id := j.id
		switch {
		case len(j.incs) > 1:
			return nil, nil, fmt.Sprintf("job %s admitted twice", short(id))
		case len(j.incs) == 0:
			first := slices.Concat(j.ends, j.reads)[:1]
			return nil, &impossible{ops: first, why: fmt.Sprintf("job %s is never admitted", short(id))}, ""
		case len(j.ends) > 1:
			return nil, &impossible{ops: slices.Concat(j.incs, j.ends), why: fmt.Sprintf("job %s ends twice", short(id))}, ""
		}
	}
	b.jobInc, b.jobEnd = make([]int32, len(jobs)), make([]int32, len(jobs))
	for n, j := range jobs {
		inc := proj[j.incs[0]]
		incDl := inc.Return
		endRel := int64(-1 << 63)
		for _, r := range j.reads {
			incDl = min(incDl, proj[r].Return)
			endRel = max(endRel, proj[r].Call)
		}
		b.jobInc[n] = b.add(dInc, int32(n), inc.Call, incDl, int(j.incs[0]))
		b.jobEnd[n] = -1
		if len(j.ends) == 1 {
			end := proj[j.ends[0]]
			b.jobEnd[n] = b.add(dEnd, int32(n), max(end.Call, endRel), end.Return, int(j.ends[0]))
		}
		jobOps = append(jobOps, slices.Concat(j.incs, j.ends, j.reads))
	}
	p := b.build(maxQueue, 0, jobOps)
	return p, nil, ""
}

// builder collects the operations of a problem.
type builder struct {
	proj           []porcupine.Operation
	ops            []dop
	rel, dl        []int64
	times          []int64 // call times of the projection, set-depth's aside
	jobInc, jobEnd []int32
}

func newBuilder(proj []porcupine.Operation) builder {
	n := len(proj)
	return builder{proj: proj, ops: make([]dop, 0, n), rel: make([]int64, 0, n), dl: make([]int64, 0, n), times: make([]int64, 0, n)}
}

func (b *builder) add(k dkind, job int32, rel, dl int64, src int) int32 {
	b.ops = append(b.ops, dop{kind: k, job: job, src: int32(src)})
	b.rel = append(b.rel, rel)
	b.dl = append(b.dl, dl)
	return int32(len(b.ops) - 1)
}

// build numbers the instants (every call time of the projection but a
// leading set-depth's) and places each window on them.
func (b *builder) build(maxQueue, init int, jobOps [][]int32) *dproblem {
	times := b.times
	slices.Sort(times)
	times = slices.Compact(times)
	p := &dproblem{
		limit: int32(max(maxQueue, 0)), init: int32(init),
		times: times, ops: b.ops, jobInc: b.jobInc, jobEnd: b.jobEnd, jobOps: jobOps,
	}
	last := int32(len(times) - 1)
	relCount := make([]int32, len(times)+1)
	dueCount := make([]int32, len(times)+1)
	ri, di := 0, 0
	for i := range p.ops {
		op := &p.ops[i]
		ri = above(times, b.rel[i]-1, ri) // rel is a call time
		op.ri = int32(ri)
		op.di = last
		if b.dl[i] != Pending {
			di = above(times, b.dl[i], di+1) - 1
			op.di = int32(di)
		}
		relCount[op.ri+1]++
		if op.mandatory() {
			// An empty window is due where it would open, so that the
			// sweep fails there, past every state that could place it.
			dueCount[max(op.di, op.ri, 0)+1]++
		}
	}
	p.rel = fill(relCount, p.ops, func(op dop) (int32, bool) { return op.ri, true })
	p.due = fill(dueCount, p.ops, func(op dop) (int32, bool) { return max(op.di, op.ri, 0), op.mandatory() })
	return p
}

// above returns the index of the first time after x. It gallops out from
// hint, the previous answer: the operations come nearly in call order, so
// this touches a few neighbouring entries where a binary search over a
// history of millions would miss the cache some twenty times.
func above(times []int64, x int64, hint int) int {
	var lo, hi int
	hint = min(max(hint, 0), len(times))
	step := 1
	if hint < len(times) && times[hint] <= x {
		for lo = hint + 1; lo+step <= len(times) && times[lo+step-1] <= x; step *= 2 {
			lo += step
		}
		hi = min(lo+step, len(times))
	} else {
		for hi = hint; hi-step >= 0 && times[hi-step] > x; step *= 2 {
			hi -= step
		}
		lo = max(hi-step, 0)
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return times[lo+k] > x })
}

// mandatory reports whether op must be linearized in its window: all but
// the unknown ones, which may be dropped.
func (op dop) mandatory() bool { return op.kind != dOptInc && op.kind != dOptDec }

// fill builds a csr from per-instant counts (shifted by one) and a key.
func fill(count []int32, ops []dop, key func(dop) (int32, bool)) csr {
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	c := csr{start: count, list: make([]int32, count[len(count)-1])}
	next := slices.Clone(count[:len(count)-1])
	for i, op := range ops {
		if k, ok := key(op); ok {
			c.list[next[k]] = int32(i)
			next[k]++
		}
	}
	return c
}
