package jobtable

import "fmt"

// admissionOrder is the order in which jobs were admitted, for listing: each
// job gets the next ordinal when it is inserted, and a walk reads the jobs
// from any ordinal down to the oldest without looking at the others. It is
// a pure core, as retentionList is: no lock, no goroutine; the Table calls
// it under Table.mu, with every insertion and eviction.
//
// It is a slice of (ordinal, job) in ascending ordinal order. Eviction
// follows completion, not admission, so a job leaves from anywhere: its
// entry is emptied in place (its ordinal stays, so the slice stays sorted
// for the walk's binary search). Empty entries at the front are dropped at
// once, by moving the start of the slice; the rest wait until they
// outnumber the jobs, and are then compacted away. Each element records
// its position, counted from the first entry ever pushed (off counts the
// entries dropped from the front), so removal costs O(1); dropping the
// front, and growing the slice, move no position; a compaction, which
// moves each job once (the moved callback), is paid for by the removals
// since the last one. So every operation is amortised O(1), and a table
// whose jobs end in about the order they came (the common case) never
// compacts: 16 bytes a job.
//
// Why not a cursor that counts positions (an offset): a walk that resumes
// at "the 20th job" skips one when a newer job is evicted between pages
// and repeats one when a job is admitted. An ordinal names a place in the
// order that neither moves (spec/Listing.tla, the offset defect).
//
// Invariants (checked by check):
//   - ents is sorted by strictly ascending ordinal, each below next, and
//     next > 0 (ordinal 0 means "no cursor").
//   - dead counts the empty entries, and dead <= max(live, minOrderDead)
//     after every operation, where live = len(ents) - dead.
//   - the first entry, if any, is not empty.
//   - the element at ents[i] has position off + i.
type admissionOrder[T comparable] struct {
	ents []admitted[T]
	dead int
	off  int    // the entries dropped from the front since the first push
	next uint64 // the ordinal the next push gets; starts at 1
}

// admitted is one entry: an ordinal and the element, or the zero T once
// removed.
type admitted[T comparable] struct {
	ord uint64
	v   T
}

// minOrderDead is the number of empty entries below which admissionOrder
// never compacts, so that small tables do not compact on every removal.
const minOrderDead = 32

// push appends v with the next ordinal and returns its ordinal and its
// position.
func (o *admissionOrder[T]) push(v T) (ord uint64, pos int) {
	if o.next == 0 {
		o.next = 1
	}
	ord = o.next
	o.next++
	o.ents = append(o.ents, admitted[T]{ord: ord, v: v})
	return ord, o.off + len(o.ents) - 1
}

// remove empties the entry at position pos, which must hold v, drops the
// empty entries at the front, then compacts if empty entries outnumber
// the live ones, telling moved the new position of each element it moves.
func (o *admissionOrder[T]) remove(pos int, v T, moved func(T, int)) {
	var zero T
	i := pos - o.off
	if i < 0 || i >= len(o.ents) || o.ents[i].v != v || v == zero {
		panic(fmt.Sprintf("jobtable: admission order: no such element at %d", pos))
	}
	o.ents[i].v = zero
	o.dead++
	for len(o.ents) > 0 && o.ents[0].v == zero {
		o.ents = o.ents[1:] // the array is freed at the next growth or compaction
		o.off++
		o.dead--
	}
	if live := len(o.ents) - o.dead; o.dead > max(live, minOrderDead) {
		o.compact(moved)
	}
}

// compact drops the empty entries, keeping the order, and shrinks the
// slice when it is mostly unused.
func (o *admissionOrder[T]) compact(moved func(T, int)) {
	var zero T
	k := 0
	for i := range o.ents {
		if o.ents[i].v == zero {
			continue
		}
		if k != i {
			o.ents[k] = o.ents[i]
			moved(o.ents[k].v, o.off+k)
		}
		k++
	}
	clear(o.ents[k:]) // the slice must not keep removed elements alive
	o.ents = o.ents[:k]
	if cap(o.ents) > 4*max(k, minOrderDead) {
		o.ents = append(make([]admitted[T], 0, 2*max(k, minOrderDead)), o.ents...)
	}
	o.dead = 0
}

// below returns the index (in ents, not a position) of the newest entry
// whose ordinal is below before (every entry when before is 0), or -1 if
// there is none. A walk reads the indices from there down to 0, skipping
// empty entries; index 0 is the oldest entry.
func (o *admissionOrder[T]) below(before uint64) int {
	if before == 0 {
		return len(o.ents) - 1
	}
	lo, hi := 0, len(o.ents) // the first entry with ord >= before is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.ents[m].ord < before {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// at returns the entry at index i.
func (o *admissionOrder[T]) at(i int) admitted[T] { return o.ents[i] }

// live returns the number of elements held.
func (o *admissionOrder[T]) live() int { return len(o.ents) - o.dead }

// check reports the ways the order breaks its invariants; pos(v) is where
// the element v says it sits.
func (o *admissionOrder[T]) check(pos func(T) int) []error {
	var errs []error
	var zero T
	dead := 0
	for i, e := range o.ents {
		if i > 0 && e.ord <= o.ents[i-1].ord {
			errs = append(errs, fmt.Errorf("admission order: ordinal %d at %d follows %d", e.ord, i, o.ents[i-1].ord))
		}
		if e.ord == 0 || e.ord >= o.next {
			errs = append(errs, fmt.Errorf("admission order: ordinal %d at %d outside [1, %d)", e.ord, i, o.next))
		}
		if e.v == zero {
			dead++
			continue
		}
		if p := pos(e.v); p != o.off+i {
			errs = append(errs, fmt.Errorf("admission order: element at %d says it sits at %d", o.off+i, p))
		}
	}
	if len(o.ents) > 0 && o.ents[0].v == zero {
		errs = append(errs, fmt.Errorf("admission order: the first entry is empty"))
	}
	if dead != o.dead {
		errs = append(errs, fmt.Errorf("admission order: %d empty entries, counted %d", dead, o.dead))
	}
	if o.dead > max(o.live(), minOrderDead) {
		errs = append(errs, fmt.Errorf("admission order: %d empty entries for %d elements, not compacted", o.dead, o.live()))
	}
	return errs
}
