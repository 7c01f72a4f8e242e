package jobtable

import "fmt"

// admissionOrder is the order in which jobs were admitted, for listing: each
// job gets the next ordinal when it is inserted, and a walk reads the jobs
// from any ordinal down to the oldest without looking at the others. It is
// a pure core, as retentionList is: no lock, no goroutine; the Table calls
// it under Table.mu, with every insertion and eviction.
//
// It is a ring of (ordinal, job) entries in ascending ordinal order.
// Eviction follows completion, not admission, so a job leaves from
// anywhere: its entry is emptied in place (its ordinal stays, so the ring
// stays sorted for the walk's binary search). Empty entries at the front
// are dropped at once, by moving the front; the rest wait until they
// outnumber the jobs, and are then compacted away. Each element records
// its position, counted from the first entry ever pushed (off counts the
// entries dropped from the front), so removal costs O(1); dropping the
// front and resizing the ring move no position. Positions are uint32 and
// wrap (pos - off is an index while fewer than 2^32 jobs are held), so a
// position shares a word with the id map's hash in the job. A compaction, which moves
// each job once (the moved callback), is paid for by the removals since
// the last one. So every operation is amortised O(1), and a table whose
// jobs end in about the order they came (the common case) neither
// compacts nor allocates once the ring has grown: 16 bytes a job.
//
// Why not a cursor that counts positions (an offset): a walk that resumes
// at "the 20th job" skips one when a newer job is evicted between pages
// and repeats one when a job is admitted. An ordinal names a place in the
// order that neither moves (spec/Listing.tla, the offset defect).
//
// Entries are numbered by index, 0 (the front, the oldest) to n-1; the
// entry of index i is buf[(head+i) & (len(buf)-1)], and its element's
// position is off + i.
//
// Invariants (checked by check):
//   - 0 <= n <= len(buf), len(buf) is zero or a power of two, and the
//     slots outside the n entries hold the zero entry.
//   - the entries are sorted by strictly ascending ordinal, each below
//     next, and next > 0 (ordinal 0 means "no cursor").
//   - dead counts the empty entries, and dead <= max(live, minOrderDead)
//     after every operation, where live = n - dead.
//   - the front entry, if any, is not empty.
//   - the element at index i says (through pos) that its position is
//     off + i.
type admissionOrder[T comparable] struct {
	buf  []admitted[T]
	head int // the slot of index 0
	n    int // the entries, empty ones included
	dead int
	off  uint32 // the entries dropped from the front since the first push, mod 2^32
	next uint64 // the ordinal the next push gets; starts at 1
}

// admitted is one entry: an ordinal and the element, or the zero T once
// removed.
type admitted[T comparable] struct {
	ord uint64
	v   T
}

// minOrderDead is the number of empty entries below which admissionOrder
// never compacts, so that small tables do not compact on every removal;
// minOrderCap is the smallest ring it allocates.
const (
	minOrderDead = 32
	minOrderCap  = 16
)

// slot returns the slot of index i.
func (o *admissionOrder[T]) slot(i int) *admitted[T] { return &o.buf[(o.head+i)&(len(o.buf)-1)] }

// push appends v with the next ordinal and returns its ordinal and its
// position.
func (o *admissionOrder[T]) push(v T) (ord uint64, pos uint32) {
	if o.next == 0 {
		o.next = 1
	}
	if o.n == len(o.buf) {
		o.resize(max(minOrderCap, 2*len(o.buf)))
	}
	ord = o.next
	o.next++
	*o.slot(o.n) = admitted[T]{ord: ord, v: v}
	o.n++
	return ord, o.off + uint32(o.n-1)
}

// remove empties the entry at position pos, which must hold v, drops the
// empty entries at the front, then compacts if empty entries outnumber
// the live ones, telling moved the new position of each element it moves.
func (o *admissionOrder[T]) remove(pos uint32, v T, moved func(T, uint32)) {
	var zero T
	i := int(pos - o.off)
	if i < 0 || i >= o.n || o.slot(i).v != v || v == zero {
		panic(fmt.Sprintf("jobtable: admission order: no such element at %d", pos))
	}
	o.slot(i).v = zero
	o.dead++
	for o.n > 0 && o.slot(0).v == zero {
		*o.slot(0) = admitted[T]{}
		o.head = (o.head + 1) & (len(o.buf) - 1)
		o.n--
		o.off++
		o.dead--
	}
	if o.dead > max(o.live(), minOrderDead) {
		o.compact(moved)
	}
	if len(o.buf) > minOrderCap && o.n <= len(o.buf)/4 {
		o.resize(len(o.buf) / 2)
	}
}

// compact drops the empty entries, keeping the order.
func (o *admissionOrder[T]) compact(moved func(T, uint32)) {
	var zero T
	k := 0
	for i := range o.n {
		e := *o.slot(i)
		if e.v == zero {
			continue
		}
		if k != i {
			*o.slot(k) = e
			moved(e.v, o.off+uint32(k))
		}
		k++
	}
	for i := k; i < o.n; i++ {
		*o.slot(i) = admitted[T]{} // the ring must not keep removed elements alive
	}
	o.n, o.dead = k, 0
}

// resize moves the entries, in order, to a fresh ring of c slots, a power
// of two at least n. Indices, and so positions, stay as they were.
func (o *admissionOrder[T]) resize(c int) {
	buf := make([]admitted[T], c)
	for i := range o.n {
		buf[i] = *o.slot(i)
	}
	o.buf, o.head = buf, 0
}

// below returns the index of the newest entry whose ordinal is below
// before (every entry when before is 0), or -1 if there is none. A walk
// reads the indices from there down to 0, skipping empty entries.
func (o *admissionOrder[T]) below(before uint64) int {
	if before == 0 {
		return o.n - 1
	}
	lo, hi := 0, o.n // the first entry with ord >= before is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.slot(m).ord < before {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// at returns the entry of index i.
func (o *admissionOrder[T]) at(i int) admitted[T] { return *o.slot(i) }

// len returns the number of entries, empty ones included.
func (o *admissionOrder[T]) len() int { return o.n }

// live returns the number of elements held.
func (o *admissionOrder[T]) live() int { return o.n - o.dead }

// check reports the ways the order breaks its invariants; pos(v) is where
// the element v says it sits.
func (o *admissionOrder[T]) check(pos func(T) uint32) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("admission order: "+format, args...))
	}
	c := len(o.buf)
	if o.n < 0 || o.n > c || c&(c-1) != 0 || (c > 0 && (o.head < 0 || o.head >= c)) {
		fail("%d entries from slot %d in a ring of %d", o.n, o.head, c)
		return errs
	}
	var zero T
	for i := o.n; i < c; i++ {
		if *o.slot(i) != (admitted[T]{}) {
			fail("free slot %d holds an entry", (o.head+i)&(c-1))
		}
	}
	dead := 0
	for i := range o.n {
		e := o.at(i)
		if i > 0 && e.ord <= o.at(i-1).ord {
			fail("ordinal %d at index %d follows %d", e.ord, i, o.at(i-1).ord)
		}
		if e.ord == 0 || e.ord >= o.next {
			fail("ordinal %d at index %d outside [1, %d)", e.ord, i, o.next)
		}
		if e.v == zero {
			dead++
			continue
		}
		if p := pos(e.v); p != o.off+uint32(i) {
			fail("element at position %d says it sits at %d", o.off+uint32(i), p)
		}
	}
	if o.n > 0 && o.at(0).v == zero {
		fail("the front entry is empty")
	}
	if dead != o.dead {
		fail("%d empty entries, counted %d", dead, o.dead)
	}
	if o.dead > max(o.live(), minOrderDead) {
		fail("%d empty entries for %d elements, not compacted", o.dead, o.live())
	}
	return errs
}
