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
// for the walk's binary search) and the slice is compacted once empty
// entries outnumber the jobs. Each element records where it sits (the
// moved callback), so removal costs O(1) and a compaction, which moves
// each job once, is paid for by the removals since the last one:
// amortised O(1) per insertion and per removal, at 16 bytes a job.
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
type admissionOrder[T comparable] struct {
	ents []admitted[T]
	dead int
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
	return ord, len(o.ents) - 1
}

// remove empties the entry at pos, which must hold v, then compacts if
// empty entries outnumber the live ones, telling moved where each live
// element now sits.
func (o *admissionOrder[T]) remove(pos int, v T, moved func(T, int)) {
	var zero T
	if pos < 0 || pos >= len(o.ents) || o.ents[pos].v != v || v == zero {
		panic(fmt.Sprintf("jobtable: admission order: no such element at %d", pos))
	}
	o.ents[pos].v = zero
	o.dead++
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
			moved(o.ents[k].v, k)
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

// below returns the position of the newest entry whose ordinal is below
// before (every entry when before is 0), or -1 if there is none. A walk
// reads the positions from there down to 0, skipping empty entries.
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

// at returns the entry at pos.
func (o *admissionOrder[T]) at(pos int) admitted[T] { return o.ents[pos] }

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
		if p := pos(e.v); p != i {
			errs = append(errs, fmt.Errorf("admission order: element at %d says it sits at %d", i, p))
		}
	}
	if dead != o.dead {
		errs = append(errs, fmt.Errorf("admission order: %d empty entries, counted %d", dead, o.dead))
	}
	if o.dead > max(o.live(), minOrderDead) {
		errs = append(errs, fmt.Errorf("admission order: %d empty entries for %d elements, not compacted", o.dead, o.live()))
	}
	return errs
}
