//go:build jobtable_trace

package jobtable

import "sync"

// Critical sections, for trace validation. In the traced build the table
// mutex and every job mutex count their acquisitions, and each goroutine
// keeps the sections it holds, so that every logged event names the
// critical section of its job's mutex (js) and of the table mutex (ts)
// that it was logged in, or none. A step the spec makes atomic but Go
// splits over two critical sections then shows in every run as two
// section numbers, and a step the spec takes under a lock but Go takes
// without it as no number, whatever else ran in between (spec/trace.mjs
// maps them onto the spec's lock variables). trace_nop.go makes both
// types plain sync.Mutex in a normal build.

// countedMutex is a mutex that numbers its critical sections.
type countedMutex struct {
	mu sync.Mutex
	// Guarded by mu: n, the sections so far, written by each holder
	// once; by, the holder's record while tracing is on (nil otherwise),
	// so that Unlock need not look its goroutine up again.
	n  int64
	by *heldSections
}

// jobMutex is job.mu and tableMutex Table.mu: two types, so that a
// goroutine's record says which of the mutexes it holds is the table's.
type (
	jobMutex   struct{ countedMutex }
	tableMutex struct{ countedMutex }
)

func (m *jobMutex) Lock()           { m.mu.Lock(); m.enter(false) }
func (m *jobMutex) TryLock() bool   { return m.mu.TryLock() && m.enter(false) }
func (m *jobMutex) Unlock()         { m.unlock() }
func (m *tableMutex) Lock()         { m.mu.Lock(); m.enter(true) }
func (m *tableMutex) TryLock() bool { return m.mu.TryLock() && m.enter(true) }
func (m *tableMutex) Unlock()       { m.unlock() }

// enter numbers the section the caller has just entered and records it as
// the caller's. It reports true.
// m.mu must be held.
func (m *countedMutex) enter(table bool) bool {
	m.n++
	if tracer.on.Load() {
		m.by = heldBy(goid(), true)
		m.by.push(heldSection{m: m, table: table, n: m.n})
	}
	return true
}

func (m *countedMutex) unlock() {
	if h := m.by; h != nil {
		m.by = nil
		h.drop(m)
	}
	m.mu.Unlock()
}

// heldSection is one critical section a goroutine is in.
type heldSection struct {
	m     *countedMutex
	table bool
	n     int64
}

// heldSections are the sections one goroutine holds, in the order it
// entered them; only that goroutine reads or writes them.
type heldSections struct{ s []heldSection }

// sectionsHeld maps a goroutine id to its *heldSections while tracing is
// on; traceEnd clears it.
var sectionsHeld sync.Map

// heldBy returns goroutine g's sections; nil if it has none and create is
// false.
func heldBy(g uint64, create bool) *heldSections {
	if h, ok := sectionsHeld.Load(g); ok {
		return h.(*heldSections)
	}
	if !create {
		return nil
	}
	h := &heldSections{}
	sectionsHeld.Store(g, h)
	return h
}

func (h *heldSections) push(s heldSection) { h.s = append(h.s, s) }

func (h *heldSections) drop(m *countedMutex) {
	for k := len(h.s) - 1; k >= 0; k-- {
		if h.s[k].m == m {
			h.s = append(h.s[:k], h.s[k+1:]...)
			return
		}
	}
}

// section returns the number of the section of m (or, m nil, of the
// table mutex) that h holds, or nil if it holds none.
func (h *heldSections) section(m *countedMutex) *int64 {
	if h == nil {
		return nil
	}
	for _, s := range h.s {
		if (m == nil && s.table) || (m != nil && s.m == m) {
			return ptr(s.n)
		}
	}
	return nil
}
