package jobtable

import "fmt"

// admissionOrder is the order in which jobs were admitted, for listing: each
// job gets the next ordinal when it is inserted, and a walk reads the jobs
// from any ordinal down to the oldest without looking at the others. It is
// a pure core, as retentionList is: no lock, no goroutine; the Table calls
// it under Table.mu, with every insertion and eviction.
//
// It is a ring of the elements in ascending ordinal order, one pointer a
// slot: each element keeps its own ordinal (the ordinal method; the job
// stores the one push gives it), so the ring holds no number of its own.
// Eviction follows completion, not admission, so a job leaves from
// anywhere: its slot is emptied in place, and the ring stays sorted for
// the walk's binary search, which passes over empty slots. Empty slots at
// the front are dropped at once, by moving the front; the rest wait until
// they outnumber the jobs, and are then compacted away. Each element
// records its position, counted from the first slot ever pushed (off
// counts the slots dropped from the front), so removal costs O(1);
// dropping the front and resizing the ring move no position. Positions are
// uint32 and wrap (pos - off is an index while fewer than 2^32 jobs are
// held), so a position shares a word with the job's state. A compaction,
// which moves each job once (the moved callback), is paid for by the
// removals since the last one. So every operation is amortised O(1),
// except that a search passes over at most the empty slots (below), and a
// table whose jobs end in about the order they came (the common case)
// neither compacts nor allocates once the ring has grown: 8 bytes a job.
//
// Why not a cursor that counts positions (an offset): a walk that resumes
// at "the 20th job" skips one when a newer job is evicted between pages
// and repeats one when a job is admitted. An ordinal names a place in the
// order that neither moves (spec/Listing.tla, the offset defect).
//
// Slots are numbered by index, 0 (the front, the oldest) to n-1; the slot
// of index i is buf[(head+i) & (len(buf)-1)], and its element's position
// is off + i.
//
// Invariants (checked by check):
//   - 0 <= n <= len(buf), len(buf) is zero or a power of two, and the
//     slots outside the n indices hold the zero T.
//   - the elements are sorted by strictly ascending ordinal, each in
//     [1, next) (ordinal 0 means "no cursor").
//   - dead counts the empty slots among the n, and dead <= max(live,
//     minOrderDead) after every operation, where live = n - dead.
//   - the front slot, if any, is not empty.
//   - the element at index i says (through pos) that its position is
//     off + i.
type admissionOrder[T ordinaled] struct {
	buf  []T
	head int // the slot of index 0
	n    int // the indices in use, empty slots included
	dead int
	off  uint32 // the slots dropped from the front since the first push, mod 2^32
	next uint64 // the ordinal the next push gives; starts at 1
}

// ordinaled is an element of an admissionOrder: a pointer (the zero value
// marks an empty slot) that returns the ordinal push gave it.
type ordinaled interface {
	comparable
	ordinal() uint64
}

// minOrderDead is the number of empty slots below which admissionOrder
// never compacts, so that small tables do not compact on every removal;
// minOrderCap is the smallest ring it allocates.
const (
	minOrderDead = 32
	minOrderCap  = 16
)

// slot returns the slot of index i.
func (o *admissionOrder[T]) slot(i int) *T { return &o.buf[(o.head+i)&(len(o.buf)-1)] }

// push appends v and returns the ordinal v must report from now on (the
// next one) and its position. The caller stores both in v before the next
// call on the order.
func (o *admissionOrder[T]) push(v T) (ord uint64, pos uint32) {
	if o.next == 0 {
		o.next = 1
	}
	if o.n == len(o.buf) {
		o.resize(max(minOrderCap, 2*len(o.buf)))
	}
	ord = o.next
	o.next++
	*o.slot(o.n) = v
	o.n++
	return ord, o.off + uint32(o.n-1)
}

// remove empties the slot at position pos, which must hold v, drops the
// empty slots at the front, then compacts if empty slots outnumber the
// elements, telling moved the new position of each element it moves.
func (o *admissionOrder[T]) remove(pos uint32, v T, moved func(T, uint32)) {
	var zero T
	i := int(pos - o.off)
	if i < 0 || i >= o.n || *o.slot(i) != v || v == zero {
		panic(fmt.Sprintf("jobtable: admission order: no such element at %d", pos))
	}
	*o.slot(i) = zero
	o.dead++
	for o.n > 0 && *o.slot(0) == zero {
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

// compact drops the empty slots, keeping the order.
func (o *admissionOrder[T]) compact(moved func(T, uint32)) {
	var zero T
	k := 0
	for i := range o.n {
		v := *o.slot(i)
		if v == zero {
			continue
		}
		if k != i {
			*o.slot(k) = v
			moved(v, o.off+uint32(k))
		}
		k++
	}
	for i := k; i < o.n; i++ {
		*o.slot(i) = zero // the ring must not keep removed elements alive
	}
	o.n, o.dead = k, 0
}

// resize moves the slots, in order, to a fresh ring of c slots, a power of
// two at least n. Indices, and so positions, stay as they were.
func (o *admissionOrder[T]) resize(c int) {
	buf := make([]T, c)
	for i := range o.n {
		buf[i] = *o.slot(i)
	}
	o.buf, o.head = buf, 0
}

// below returns an index at or above the newest element whose ordinal is
// below before, and below every element whose ordinal is not (n-1 when
// before is 0), or -1 if there is none. A walk reads the indices from
// there down to 0, skipping empty slots.
//
// It is a binary search over the elements, which passes over empty slots:
// a probe that lands on one looks down for an element. Each probe's look
// reads slots that no later probe reads again (the range either starts
// above the probe or ends below the element found), so a search reads
// O(log n) elements and at most every empty slot once: the empty slots
// are bounded by the elements (compaction), and a walk passes over them
// anyway.
func (o *admissionOrder[T]) below(before uint64) int {
	if before == 0 {
		return o.n - 1
	}
	var zero T
	// The first index past every element with ordinal below before is in
	// [lo, hi]; every element at or above hi has ordinal >= before.
	lo, hi := 0, o.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k := m
		for k >= lo && *o.slot(k) == zero {
			k--
		}
		switch {
		case k < lo: // [lo, m] is empty: nothing there to find
			lo = m + 1
		case (*o.slot(k)).ordinal() < before: // so is every element up to m
			lo = m + 1
		default: // k and every element above it are at or past before
			hi = k
		}
	}
	return lo - 1
}

// at returns the element of index i, or the zero T for an empty slot.
func (o *admissionOrder[T]) at(i int) T { return *o.slot(i) }

// len returns the number of indices in use, empty slots included.
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
		fail("%d slots from slot %d in a ring of %d", o.n, o.head, c)
		return errs
	}
	var zero T
	for i := o.n; i < c; i++ {
		if *o.slot(i) != zero {
			fail("free slot %d holds an element", (o.head+i)&(c-1))
		}
	}
	dead := 0
	var prev uint64 // the ordinal of the element before, 0 for none
	for i := range o.n {
		v := o.at(i)
		if v == zero {
			dead++
			continue
		}
		ord := v.ordinal()
		if ord <= prev {
			fail("ordinal %d at index %d follows %d", ord, i, prev)
		}
		if ord == 0 || ord >= o.next {
			fail("ordinal %d at index %d outside [1, %d)", ord, i, o.next)
		}
		prev = ord
		if p := pos(v); p != o.off+uint32(i) {
			fail("element at position %d says it sits at %d", o.off+uint32(i), p)
		}
	}
	if o.n > 0 && o.at(0) == zero {
		fail("the front slot is empty")
	}
	if dead != o.dead {
		fail("%d empty slots, counted %d", dead, o.dead)
	}
	if o.dead > max(o.live(), minOrderDead) {
		fail("%d empty slots for %d elements, not compacted", o.dead, o.live())
	}
	return errs
}
