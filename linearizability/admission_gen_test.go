package linearizability

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/anishathalye/porcupine"
)

// Generators of admission projections for the differential test
// (admission_decide_test.go): runs of a correct counter, mutations of them,
// and crowded random histories.

// genTableHistory runs a correct bounded counter: each operation takes
// effect at a point of its window, in the order of the points.
func genTableHistory(r *rand.Rand) ([]porcupine.Operation, int) {
	limit := r.IntN(5)
	n := 3 + r.IntN(22)
	span := int64(n/2 + r.IntN(3*n))
	maxDur := int64(r.IntN(8))
	type gen struct {
		op    porcupine.Operation
		point int64
	}
	var ops []gen
	for i := range n {
		call := r.Int64N(span + 1)
		ret := call + r.Int64N(maxDur+1)
		point := call + r.Int64N(ret-call+1)
		in := Input{Kind: Submit, TaskID: fmt.Sprint("t", i)}
		out := Output{Outcome: OK}
		switch k := r.IntN(20); {
		case k < 9:
		case k < 17:
			in = Input{Kind: []Kind{Finish, Fail, Timeout}[r.IntN(3)], ID: fmt.Sprint("j", i)}
		case k < 19:
			out.Outcome, ret = Unknown, Pending
		default:
			in = Input{Kind: Finish, ID: fmt.Sprint("j", i)}
			out.Outcome, ret = Unknown, Pending
		}
		if ret == Pending && r.IntN(2) == 0 {
			point = Pending // took no effect: after everything
		}
		ops = append(ops, gen{porcupine.Operation{ClientId: i, Input: in, Output: out, Call: call, Return: ret}, point})
	}
	slices.SortStableFunc(ops, func(a, b gen) int { return cmp.Compare(a.point, b.point) })
	depth := 0
	var h []porcupine.Operation
	if r.IntN(4) == 0 {
		depth = r.IntN(limit + 2)
		h = append(h, porcupine.Operation{ClientId: n, Input: Input{Kind: SetDepth, Depth: depth}, Output: Output{Outcome: OK}, Call: -1, Return: -1})
	}
	for _, g := range ops {
		op := g.op
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case out.Outcome == Unknown && g.point == Pending:
		case out.Outcome == Unknown:
			if in.Kind == Submit && depth < limit {
				depth++
			} else if in.Kind != Submit && depth > 0 {
				depth--
			}
		case in.Kind == Submit && depth < limit:
			depth++
		case in.Kind == Submit:
			out.Outcome = QueueFull
		case depth > 0:
			depth--
		default:
			continue // a terminal call that did not win is not projected
		}
		op.Output = out
		h = append(h, op)
	}
	return h, limit
}

// mutateTableHistory changes one thing in h, which may or may not make it
// illegal.
func mutateTableHistory(r *rand.Rand, h []porcupine.Operation) []porcupine.Operation {
	h = slices.Clone(h)
	if len(h) == 0 {
		return h
	}
	i := r.IntN(len(h))
	op := &h[i]
	in, out := op.Input.(Input), op.Output.(Output)
	if in.Kind == SetDepth {
		in.Depth = max(in.Depth+r.IntN(3)-1, 0)
		op.Input = in
		return h
	}
	switch r.IntN(8) {
	case 0: // flip the outcome
		switch {
		case in.Kind == Submit && out.Outcome == OK:
			out.Outcome = QueueFull
		case in.Kind == Submit && out.Outcome == QueueFull:
			out.Outcome = OK
		case out.Outcome == OK:
			out.Outcome, op.Return = Unknown, Pending
		}
		op.Output = out
	case 1, 2: // shift the call or the return
		d := int64(r.IntN(7) - 3)
		if op.Return != Pending && r.IntN(2) == 0 {
			op.Return = max(op.Return+d, op.Call)
		} else {
			op.Call = max(op.Call+d, 0)
			if op.Return != Pending {
				op.Return = max(op.Return, op.Call)
			}
		}
	case 3: // drop it
		return slices.Delete(h, i, i+1)
	case 4: // an unknown outcome, pending forever
		k := Submit
		if r.IntN(2) == 0 {
			k = Timeout
		}
		h = append(h, porcupine.Operation{ClientId: 100 + len(h), Input: Input{Kind: k, ID: "u"}, Output: Output{Outcome: Unknown}, Call: op.Call + int64(r.IntN(5)), Return: Pending})
	case 5: // a duplicate
		h = append(h, *op)
	case 6: // an extra operation
		k, o := Submit, []Outcome{OK, QueueFull}[r.IntN(2)]
		if r.IntN(3) == 0 {
			k, o = Finish, OK
		}
		call := op.Call + int64(r.IntN(5)-2)
		h = append(h, porcupine.Operation{ClientId: 100 + len(h), Input: Input{Kind: k, ID: "x"}, Output: Output{Outcome: o}, Call: max(call, 0), Return: max(call, 0) + int64(r.IntN(4))})
	case 7: // never returned
		op.Return = Pending
	}
	return h
}

// genHTTPHistory runs a correct server as the HTTP level sees it: 202s and
// 429s at the bound, each admitted job ending unseen at some point and seen
// ended (its End returns) later or never, and reads that saw jobs live.
func genHTTPHistory(r *rand.Rand) ([]porcupine.Operation, int) {
	limit := r.IntN(4)
	n := 3 + r.IntN(18)
	w := int64(r.IntN(5))
	type job struct {
		id      string
		endCall int64 // its End's call: its POST's, or a little before
	}
	var live []*job
	var h []porcupine.Operation
	around := func(p int64) (int64, int64) { return p - r.Int64N(w+1), p + r.Int64N(w+1) }
	end := func(j *job, p int64) {
		ret := p + r.Int64N(3*w+1)
		if r.IntN(6) == 0 {
			ret = Pending
		}
		h = append(h, porcupine.Operation{ClientId: endClientBase, Input: Input{Kind: End, ID: j.id}, Output: Output{Outcome: OK}, Call: j.endCall, Return: ret})
	}
	for e := range n {
		p := int64(10 + 3*e)
		call, ret := around(p)
		switch k := r.IntN(10); {
		case k < 5 || len(live) == 0:
			if len(live) >= limit {
				h = append(h, porcupine.Operation{ClientId: e, Input: Input{Kind: Submit, TaskID: "t"}, Output: Output{Outcome: QueueFull}, Call: call, Return: ret})
				continue
			}
			j := &job{id: fmt.Sprint("j", e), endCall: call}
			if r.IntN(5) == 0 {
				j.endCall = call - r.Int64N(3)
			}
			h = append(h, porcupine.Operation{ClientId: e, Input: Input{Kind: Submit, TaskID: "t"}, Output: Output{Outcome: OK, ID: j.id}, Call: call, Return: ret})
			live = append(live, j)
		case k < 8:
			i := r.IntN(len(live))
			end(live[i], p)
			live = slices.Delete(live, i, i+1)
		default:
			j := live[r.IntN(len(live))]
			kind := []Kind{Snapshot, Wait, Result}[r.IntN(3)]
			out := Output{Outcome: OK, State: StatePending}
			switch kind {
			case Wait:
				out.Outcome = Deadline
			case Result:
				out.Outcome = NotDone
			}
			h = append(h, porcupine.Operation{ClientId: e, Input: Input{Kind: kind, ID: j.id}, Output: out, Call: call, Return: ret})
		}
	}
	for _, j := range live {
		if r.IntN(2) == 0 {
			end(j, int64(10+3*n))
		} else {
			h = append(h, porcupine.Operation{ClientId: endClientBase, Input: Input{Kind: End, ID: j.id}, Output: Output{Outcome: OK}, Call: j.endCall, Return: Pending})
		}
	}
	return h, limit
}

// mutateHTTPHistory changes one thing in h.
func mutateHTTPHistory(r *rand.Rand, h []porcupine.Operation) []porcupine.Operation {
	h = slices.Clone(h)
	if len(h) == 0 {
		return h
	}
	i := r.IntN(len(h))
	op := &h[i]
	in, out := op.Input.(Input), op.Output.(Output)
	switch r.IntN(9) {
	case 0: // flip a 202 and a 429
		switch {
		case in.Kind == Submit && out.Outcome == OK && r.IntN(3) == 0:
			out = Output{Outcome: QueueFull}
		case in.Kind == Submit && out.Outcome == QueueFull:
			out = Output{Outcome: OK, ID: fmt.Sprint("n", r.Uint64())}
			if r.IntN(2) == 0 {
				h = append(h, porcupine.Operation{ClientId: endClientBase, Input: Input{Kind: End, ID: out.ID}, Output: Output{Outcome: OK}, Call: op.Call, Return: op.Return + int64(r.IntN(6))})
				op = &h[i]
			}
		}
		op.Output = out
	case 1, 2: // shift the call or the return
		d := int64(r.IntN(9) - 4)
		if op.Return != Pending && r.IntN(2) == 0 {
			op.Return = max(op.Return+d, op.Call)
		} else {
			op.Call += d
			if op.Return != Pending {
				op.Return = max(op.Return, op.Call)
			}
		}
	case 3: // drop it (not a 202, which would leave its End unadmitted)
		if in.Kind != Submit || out.Outcome != OK || r.IntN(4) == 0 {
			return slices.Delete(h, i, i+1)
		}
	case 4: // an End seen never
		if in.Kind == End {
			op.Return = Pending
		}
	case 5: // an extra read of some job, at some time
		j := h[r.IntN(len(h))]
		id := j.Input.(Input).ID
		if j.Input.(Input).Kind == Submit {
			id = j.Output.(Output).ID
		}
		if id != "" {
			call := j.Call + int64(r.IntN(12)-2)
			h = append(h, porcupine.Operation{ClientId: 200, Input: Input{Kind: Snapshot, ID: id}, Output: Output{Outcome: OK, State: StateRunning, Started: true}, Call: call, Return: call + int64(r.IntN(4))})
		}
	case 6: // an extra 429 or 202
		call := op.Call + int64(r.IntN(7)-3)
		o := Output{Outcome: QueueFull}
		if r.IntN(3) == 0 {
			o = Output{Outcome: OK, ID: fmt.Sprint("x", r.Uint64())}
		}
		h = append(h, porcupine.Operation{ClientId: 201, Input: Input{Kind: Submit}, Output: o, Call: call, Return: call + int64(r.IntN(4))})
	case 7: // two Ends trade jobs
		var ends []int
		for k, x := range h {
			if x.Input.(Input).Kind == End {
				ends = append(ends, k)
			}
		}
		if len(ends) >= 2 {
			a, b := ends[r.IntN(len(ends))], ends[r.IntN(len(ends))]
			h[a].Input, h[b].Input = h[b].Input, h[a].Input
		}
	case 8: // a read that saw its job ended: never live
		if sawLive(in, out) && r.IntN(3) == 0 {
			out.State = StateDone
			op.Output = out
		}
	}
	return h
}

// randomOutcomes keeps the shape of h (its windows and jobs) and draws
// submits' outcomes at random: often a violation when contested. At the
// HTTP level a 202 stays (its End and reads need it), and a 429 may become
// a 202 of a job nobody sees end.
func randomOutcomes(r *rand.Rand, h []porcupine.Operation, http bool) []porcupine.Operation {
	h = slices.Clone(h)
	for i := range h {
		in, out := h[i].Input.(Input), h[i].Output.(Output)
		if in.Kind != Submit || out.Outcome == Unknown || r.IntN(2) == 0 {
			continue
		}
		switch out.Outcome {
		case OK:
			if !http {
				h[i].Output = Output{Outcome: QueueFull}
			}
		case QueueFull:
			h[i].Output = Output{Outcome: OK, ID: fmt.Sprint("r", r.Uint64())}
		}
	}
	return h
}

// randomHistory draws a few operations of every kind the model knows, with
// windows crowded into a short span.
func randomHistory(r *rand.Rand, http bool) []porcupine.Operation {
	span := int64(2 + r.IntN(8))
	window := func() (int64, int64) {
		call := r.Int64N(span)
		ret := call + r.Int64N(4)
		if r.IntN(6) == 0 {
			ret = Pending
		}
		return call, ret
	}
	var h []porcupine.Operation
	add := func(in Input, out Output) {
		call, ret := window()
		if out.Outcome == Unknown {
			ret = Pending
		}
		h = append(h, porcupine.Operation{ClientId: len(h), Input: in, Output: out, Call: call, Return: ret})
	}
	if !http {
		if r.IntN(4) == 0 {
			h = append(h, porcupine.Operation{Input: Input{Kind: SetDepth, Depth: r.IntN(4)}, Output: Output{Outcome: OK}, Call: -1, Return: -1})
		}
		for range 2 + r.IntN(8) {
			switch k := r.IntN(10); {
			case k < 3:
				add(Input{Kind: Submit}, Output{Outcome: OK})
			case k < 5:
				add(Input{Kind: Submit}, Output{Outcome: QueueFull})
			case k < 8:
				add(Input{Kind: Finish, ID: "j"}, Output{Outcome: OK})
			case k < 9:
				add(Input{Kind: Submit}, Output{Outcome: Unknown})
			default:
				add(Input{Kind: Fail, ID: "j"}, Output{Outcome: Unknown})
			}
		}
		return h
	}
	for j := range 1 + r.IntN(4) {
		id := fmt.Sprint("j", j)
		add(Input{Kind: Submit}, Output{Outcome: OK, ID: id})
		if r.IntN(5) > 0 {
			add(Input{Kind: End, ID: id}, Output{Outcome: OK})
		}
		for range r.IntN(3) {
			add(Input{Kind: Snapshot, ID: id}, Output{Outcome: OK, State: StateRunning, Started: true})
		}
	}
	for range r.IntN(4) {
		add(Input{Kind: Submit}, Output{Outcome: QueueFull})
	}
	return h
}
