package jobtable

import (
	"fmt"
	"iter"
	"reflect"
)

// retentionList is the order in which terminal jobs are evicted: a FIFO of
// the jobs in the order they completed, the least recently completed at the
// front. It is the pure core of retention (the role golang-lru's simplelru
// plays under its locked Cache): it takes no lock and starts no goroutine,
// so its tests drive it directly; the Table calls it under Table.mu.
//
// Retention never removes a job from the middle: a terminal job stays
// terminal, so it leaves the list only by being evicted from the front. A
// ring buffer is therefore enough, and cheaper than a linked list: one
// pointer-sized slot per job rather than two links in every job, and no
// allocation per push once the ring has grown.
//
// Every operation is amortised O(1): push doubles a full ring, popFront
// halves one that is at most a quarter full, so each element is copied a
// bounded number of times per resize it causes.
//
// Invariants:
//   - 0 <= n <= len(buf), and len(buf) is zero or a power of two.
//   - the elements, oldest first, are buf[(head+i) & (len(buf)-1)] for
//     i in [0, n); every other slot holds the zero T, so a popped element
//     is not kept alive by the ring.
type retentionList[T any] struct {
	buf  []T
	head int // index of the front element when n > 0
	n    int
}

// minRetentionCap is the smallest ring retentionList allocates, and the
// size below which it never shrinks.
const minRetentionCap = 16

// len returns the number of elements.
func (l *retentionList[T]) len() int { return l.n }

// push appends v at the back: v is now the most recently completed.
func (l *retentionList[T]) push(v T) {
	if l.n == len(l.buf) {
		l.resize(max(minRetentionCap, 2*len(l.buf)))
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = v
	l.n++
}

// front returns the least recently completed element, and false if the
// list is empty.
func (l *retentionList[T]) front() (T, bool) {
	if l.n == 0 {
		var zero T
		return zero, false
	}
	return l.buf[l.head], true
}

// popFront removes and returns the least recently completed element.
// The list must not be empty.
func (l *retentionList[T]) popFront() T {
	if l.n == 0 {
		panic("jobtable: popFront on an empty retention list")
	}
	var zero T
	v := l.buf[l.head]
	l.buf[l.head] = zero // the ring must not keep an evicted job alive
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	if len(l.buf) > minRetentionCap && l.n <= len(l.buf)/4 {
		l.resize(len(l.buf) / 2)
	}
	return v
}

// all yields the elements, least recently completed first. The list must
// not change during the iteration.
func (l *retentionList[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range l.n {
			if !yield(l.buf[(l.head+i)&(len(l.buf)-1)]) {
				return
			}
		}
	}
}

// resize moves the elements, in order, to a fresh ring of size c, a power
// of two at least l.n.
func (l *retentionList[T]) resize(c int) {
	buf := make([]T, c)
	if l.n > 0 {
		k := copy(buf, l.buf[l.head:min(l.head+l.n, len(l.buf))])
		copy(buf[k:], l.buf[:l.n-k])
	}
	l.buf, l.head = buf, 0
}

// check reports the first way the list breaks its invariants, for the
// table's checkInvariants and for the list's own tests.
func (l *retentionList[T]) check() error {
	c := len(l.buf)
	switch {
	case l.n < 0 || l.n > c:
		return fmt.Errorf("retention list: %d elements in a ring of %d", l.n, c)
	case c&(c-1) != 0:
		return fmt.Errorf("retention list: ring of %d is not a power of two", c)
	case c > 0 && (l.head < 0 || l.head >= c):
		return fmt.Errorf("retention list: front at %d in a ring of %d", l.head, c)
	}
	for i := l.n; i < c; i++ {
		if !reflect.ValueOf(&l.buf[(l.head+i)&(c-1)]).Elem().IsZero() {
			return fmt.Errorf("retention list: free slot %d still holds an element", (l.head+i)&(c-1))
		}
	}
	return nil
}
