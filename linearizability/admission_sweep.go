package linearizability

import (
	"fmt"
	"math/bits"
)

// This file is the sweep itself; admission_decide.go states the problem
// and proves the sweep exact.

// sweepResult is where a sweep ended.
type sweepResult struct {
	ok bool
	// failAt is the instant where every state died; -1 when ok.
	failAt int32
	// giveUp, when set, says why the sweep could not decide.
	giveUp string
	peak   int // most states held at one instant
}

// sweeper walks the instants of p.
type sweeper struct {
	p *dproblem
	k int32

	slotOp [maxSlots]int32
	used   uint64 // occupied slots
	slotOf []int8 // op -> slot, -1 when not in flight

	upCalled, downCalled int32

	// views of the operations in flight, rebuilt when they change
	incT, full uint64 // slots of incs with a job, of fulls
	incU, decs []int8 // slots of incs without a job, of decs, by deadline
	dirty      bool

	cur, nxt stateSet
	peak     int
}

func newSweeper(p *dproblem) *sweeper {
	w := &sweeper{p: p, slotOf: make([]int8, len(p.ops))}
	for i := range w.slotOf {
		w.slotOf[i] = -1
	}
	w.cur.add(dstate{c: p.init})
	return w
}

// run sweeps the instants before stop (all of them when stop < 0).
func (w *sweeper) run(stop int32) sweepResult {
	n := int32(len(w.p.times))
	if stop < 0 || stop > n {
		stop = n
	}
	for ; w.k < stop; w.k++ {
		if msg := w.release(); msg != "" {
			return sweepResult{failAt: -1, giveUp: msg, peak: w.peak}
		}
		if w.dirty {
			w.rebuild()
		}
		w.nxt.reset()
		for _, s := range w.cur.list {
			w.nxt.add(w.eager(s))
		}
		for i := 0; i < len(w.nxt.list); i++ {
			w.expand(w.nxt.list[i])
			if len(w.nxt.list) > maxStates {
				return sweepResult{failAt: -1, giveUp: fmt.Sprintf("more than %d states at one instant", maxStates), peak: w.peak}
			}
		}
		w.peak = max(w.peak, len(w.nxt.list))
		w.cur.reset()
		for _, s := range w.nxt.list {
			if s, ok := w.settle(s); ok {
				w.cur.add(s)
			}
		}
		w.close()
		if len(w.cur.list) == 0 {
			return sweepResult{failAt: w.k, peak: w.peak}
		}
	}
	return sweepResult{ok: true, failAt: -1, peak: w.peak}
}

// release puts the operations called at this instant in flight.
func (w *sweeper) release() string {
	for _, i := range w.p.rel.at(w.k) {
		switch w.p.ops[i].kind {
		case dOptInc:
			w.upCalled++
		case dOptDec:
			w.downCalled++
		case dInc, dDec, dFull:
			free := ^w.used
			if free == 0 {
				return fmt.Sprintf("more than %d operations in flight at once", maxSlots)
			}
			s := bits.TrailingZeros64(free)
			w.used |= 1 << s
			w.slotOp[s] = i
			w.slotOf[i] = int8(s)
			w.dirty = true
		}
	}
	return ""
}

// close takes the operations whose window ends at this instant out of
// flight: every surviving state has done them.
func (w *sweeper) close() {
	var mask uint64
	for _, i := range w.p.due.at(w.k) {
		if s := w.slotOf[i]; s >= 0 {
			mask |= 1 << s
			w.slotOf[i] = -1
		}
	}
	if mask == 0 {
		return
	}
	w.used &^= mask
	w.dirty = true
	for j := range w.cur.list {
		w.cur.list[j].done &^= mask
	}
	w.cur.rehash()
}

// rebuild recomputes the views of the operations in flight.
func (w *sweeper) rebuild() {
	w.dirty = false
	w.incT, w.full = 0, 0
	w.incU, w.decs = w.incU[:0], w.decs[:0]
	for m := w.used; m != 0; m &= m - 1 {
		s := int8(bits.TrailingZeros64(m))
		op := &w.p.ops[w.slotOp[s]]
		switch {
		case op.kind == dFull:
			w.full |= 1 << s
		case op.kind == dInc && op.job >= 0:
			w.incT |= 1 << s
		case op.kind == dInc:
			w.incU = w.insertByDeadline(w.incU, s)
		case op.kind == dDec:
			w.decs = w.insertByDeadline(w.decs, s)
		}
	}
}

func (w *sweeper) insertByDeadline(list []int8, s int8) []int8 {
	key := w.slotOp[s]
	i := len(list)
	for i > 0 && w.before(key, w.slotOp[list[i-1]]) {
		i--
	}
	list = append(list, 0)
	copy(list[i+1:], list[i:])
	list[i] = s
	return list
}

// before orders operations by deadline, then by index.
func (w *sweeper) before(a, b int32) bool {
	da, db := w.p.ops[a].di, w.p.ops[b].di
	return da < db || da == db && a < b
}

// eager does every full in flight when c >= L (Lemma 1).
func (w *sweeper) eager(s dstate) dstate {
	if s.c >= w.p.limit {
		s.done |= w.full
	}
	return s
}

// expand adds the states one more increment leads to.
func (w *sweeper) expand(s dstate) {
	for m := w.incT &^ s.done; m != 0; m &= m - 1 {
		if t, ok := w.increment(s, bits.TrailingZeros64(m)); ok {
			w.nxt.add(t)
		}
	}
	for _, slot := range w.incU {
		if s.done&(1<<slot) == 0 {
			if t, ok := w.increment(s, int(slot)); ok {
				w.nxt.add(t)
			}
			return // Lemma 3: only the earliest deadline
		}
	}
	if s.up < w.upCalled {
		if t, ok := w.increment(s, -1); ok {
			w.nxt.add(t)
		}
	}
}

// increment does the inc in slot (an optInc when slot < 0), preceded by
// the room decrements it needs (Lemma 2).
func (w *sweeper) increment(s dstate, slot int) (dstate, bool) {
	for s.c >= w.p.limit {
		if !w.room(&s) {
			return s, false
		}
	}
	s.c++
	if slot < 0 {
		s.up++
	} else {
		s.done |= 1 << slot
		if j := w.p.ops[w.slotOp[slot]].job; j >= 0 {
			s.live = liveAdd(s.live, j)
		}
	}
	return w.eager(s), true
}

// room does the available decrement with the earliest deadline.
func (w *sweeper) room(s *dstate) bool {
	best, slot, job := int32(-1), -1, int32(-1)
	if s.c > 0 {
		for _, d := range w.decs {
			if s.done&(1<<d) == 0 {
				best, slot = w.slotOp[d], int(d)
				break
			}
		}
	}
	for i := 0; i < len(s.live); i += 4 {
		j := liveAt(s.live, i)
		e := w.p.jobEnd[j]
		if e < 0 || w.p.ops[e].ri > w.k {
			continue
		}
		if best < 0 || w.before(e, best) {
			best, slot, job = e, -1, j
		}
	}
	switch {
	case job >= 0:
		s.live = liveRemove(s.live, job)
	case slot >= 0:
		s.done |= 1 << slot
	case s.c > 0 && s.down < w.downCalled:
		s.down++
	default:
		return false
	}
	s.c--
	return true
}

// settle does the due decrements of this instant and reports whether
// every operation whose window ends here is done.
func (w *sweeper) settle(s dstate) (dstate, bool) {
	due := w.p.due.at(w.k)
	for _, i := range due {
		op := w.p.ops[i]
		if op.di < op.ri || op.ri > w.k || (op.kind == dInc || op.kind == dFull) && !w.isDone(s, i) {
			return s, false // an empty window, or not done in it
		}
	}
	for _, i := range due { // decs first: each needs c > 0
		if w.p.ops[i].kind == dDec && !w.isDone(s, i) {
			if s.c <= 0 {
				return s, false
			}
			s.c--
		}
	}
	for _, i := range due {
		if op := w.p.ops[i]; op.kind == dEnd {
			switch {
			case liveHas(s.live, op.job):
				s.live = liveRemove(s.live, op.job)
				s.c--
			case !w.isDone(s, w.p.jobInc[op.job]):
				return s, false // its job was never admitted before it
			}
		}
	}
	return s, true
}

// isDone reports whether op i (an inc, dec or full) is done in s: its
// bit while in flight; yes once out of flight (every state that survived
// its window did it); no before it is released, at this instant or later.
func (w *sweeper) isDone(s dstate, i int32) bool {
	if slot := w.slotOf[i]; slot >= 0 {
		return s.done&(1<<slot) != 0
	}
	return w.p.ops[i].ri < w.k
}
