package jobtable

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// elem is an element of the admission order in its tests: it keeps the
// ordinal push gave it, as a job does.
type elem struct{ ord int }

func (e *elem) ordinal() uint64 { return uint64(e.ord) }

// orderModel drives an admissionOrder of elems and remembers where each
// sits, as the table does in job.pos.
type orderModel struct {
	o   admissionOrder[*elem]
	pos map[*elem]uint32
}

func (m *orderModel) push() *elem {
	v := new(elem)
	ord, pos := m.o.push(v)
	v.ord = int(ord)
	m.pos[v] = pos
	return v
}

func (m *orderModel) remove(v *elem) {
	m.o.remove(m.pos[v], v, func(v *elem, p uint32) { m.pos[v] = p })
	delete(m.pos, v)
}

// walk lists the ordinals below before, newest first.
func (m *orderModel) walk(before uint64) []int {
	var got []int
	for p := m.o.below(before); p >= 0; p-- {
		if v := m.o.at(p); v != nil {
			got = append(got, v.ord)
		}
	}
	return got
}

// TestAdmissionOrderAgainstASlice: random pushes and removals (from
// anywhere, as completion order allows), each walk from each cursor
// compared with a filter of every element ever pushed; the invariants hold
// after every step, compactions included, and across the wrap of the
// uint32 positions.
func TestAdmissionOrderAgainstASlice(t *testing.T) {
	for name, off := range map[string]uint32{"from zero": 0, "across the wrap": math.MaxUint32 - 1000} {
		t.Run(name, func(t *testing.T) { testOrderAgainstASlice(t, off) })
	}
}

func testOrderAgainstASlice(t *testing.T, off uint32) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := &orderModel{o: admissionOrder[*elem]{off: off}, pos: map[*elem]uint32{}}
	var held []*elem // ascending ordinal
	for step := range 5000 {
		if len(held) == 0 || rng.IntN(3) > 0 {
			held = append(held, m.push())
		} else {
			i := rng.IntN(len(held))
			m.remove(held[i])
			held = append(held[:i], held[i+1:]...)
		}
		require.Empty(t, m.o.check(func(v *elem) uint32 { return m.pos[v] }), "step %d", step)
		if step%97 != 0 {
			continue
		}
		before := uint64(rng.IntN(int(m.o.next) + 1))
		var want []int
		for i := len(held) - 1; i >= 0; i-- {
			if before == 0 || uint64(held[i].ord) < before {
				want = append(want, held[i].ord)
			}
		}
		require.Equal(t, want, m.walk(before), "step %d, below %d", step, before)
	}
}

// TestAdmissionOrderCompacts: removals beyond the live count compact the
// slice and shrink it, so memory follows the jobs held.
func TestAdmissionOrderCompacts(t *testing.T) {
	m := &orderModel{pos: map[*elem]uint32{}}
	var vs []*elem
	for range 1000 {
		vs = append(vs, m.push())
	}
	for _, v := range vs[:990] {
		m.remove(v)
	}
	require.Equal(t, 10, m.o.live())
	require.LessOrEqual(t, m.o.dead, minOrderDead)
	require.LessOrEqual(t, len(m.o.buf), 4*minOrderDead)
	require.Equal(t, []int{1000, 999, 998, 997, 996, 995, 994, 993, 992, 991}, m.walk(0))
	require.Equal(t, []int{992, 991}, m.walk(993))
	require.Empty(t, m.walk(991))
	require.Empty(t, m.o.check(func(v *elem) uint32 { return m.pos[v] }))
}

// TestAdmissionOrderRemoveMisuse: removing what is not there panics
// rather than corrupting the order.
func TestAdmissionOrderRemoveMisuse(t *testing.T) {
	m := &orderModel{pos: map[*elem]uint32{}}
	v := m.push()
	other := new(elem)
	require.Panics(t, func() { m.o.remove(0, other, func(*elem, uint32) {}) })
	require.Panics(t, func() { m.o.remove(5, v, func(*elem, uint32) {}) })
}

// TestAdmissionOrderFIFONeverMoves: jobs that leave in the order they came
// (the common case: completion follows admission) are dropped from the
// front: no job's position is ever rewritten, and the ring, once grown, is
// not reallocated.
func TestAdmissionOrderFIFONeverMoves(t *testing.T) {
	m := &orderModel{pos: map[*elem]uint32{}}
	var vs []*elem
	var ring **elem
	for i := range 5000 {
		vs = append(vs, m.push())
		if i == 200 {
			ring = &m.o.buf[0]
		}
		if i >= 100 {
			m.o.remove(m.pos[vs[0]], vs[0], func(*elem, uint32) { t.Fatal("a job was moved") })
			vs = vs[1:]
		}
	}
	require.Equal(t, 100, m.o.live())
	require.Zero(t, m.o.dead)
	require.Same(t, ring, &m.o.buf[0], "the ring was reallocated")
	require.LessOrEqual(t, len(m.o.buf), 4*100)
	require.Empty(t, m.o.check(func(v *elem) uint32 { return m.pos[v] }))
}
