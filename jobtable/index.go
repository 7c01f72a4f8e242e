package jobtable

import (
	"fmt"
	"hash/maphash"
	"iter"
	"math/bits"
	"sync/atomic"
)

// jobIndex is the id map: an open-addressing hash table with linear
// probing whose slots are atomic words. Readers take no lock at all: a
// lookup loads the current slot array and probes it with atomic loads, so
// pollers, waiters and result readers never contend with each other nor
// wait for a writer, whatever jobs they read. Writes (insert, remove) need
// no lock of their own because there is only ever one writer: the Table
// makes every write under Table.mu, which also orders eviction before the
// insertion of the Submit that evicts.
//
// A reader may probe a slot array that the writer has just replaced by a
// larger or smaller one, or find a job that the writer removes a moment
// later. Either way it sees the index as it was when it loaded the array:
// the writer never changes a published array except by filling a free or
// removed slot and by marking a slot removed, and it never empties a slot,
// so every job present when the reader loaded the array stays on its
// probe path. Only terminal jobs are removed (see Table on why a stale hit
// is harmless).
//
// Why not sync.Map or a sharded map under read-write mutexes: the first
// allocates on every store (it boxes the string key and allocates an
// entry) and takes about five times the memory per entry; the second makes
// each lookup two atomic read-modify-writes on a shared lock word, and
// each write a lock round trip. docs/performance.md has the figures.
//
// Synchronisation:
//   - seed, tomb: immutable after init.
//   - slots: atomic pointer to the current array, replaced only by the
//     writer. Each slot's hash and job are atomic words; the writer stores
//     the hash before the job, a reader loads the job before the hash.
//   - live, dead, and the hash field of every job it holds (the low 32
//     bits of its id's hash: its home slot in an array of at most 2^32
//     slots): read and written only by the writer.
//
// Invariants (checked by check):
//   - the array's length is a power of two, at least minIndexCap, and
//     live + dead < its length: a probe always ends at an empty slot.
//   - live counts the slots holding a job, dead the slots holding tomb.
//   - each job is held once, its slot's hash is its id's hash and its own
//     hash field the low 32 bits of it, and no empty slot lies between its
//     id's home slot and its own.
type jobIndex[Req, Res any] struct {
	seed  maphash.Seed
	tomb  *job[Req, Res] // marks a removed entry; never a real job
	slots atomic.Pointer[indexSlots[Req, Res]]

	live, dead int
}

// indexSlots is one slot array. A slot holds a job and its id's hash, side
// by side so that a probe reads one cache line; the hash filters probes
// without touching the job: a lookup dereferences only a job whose hash
// matches.
type indexSlots[Req, Res any] []indexSlot[Req, Res]

type indexSlot[Req, Res any] struct {
	hash atomic.Uint64
	job  atomic.Pointer[job[Req, Res]]
}

const minIndexCap = 32

func newIndexSlots[Req, Res any](n int) *indexSlots[Req, Res] {
	s := make(indexSlots[Req, Res], n)
	return &s
}

func (x *jobIndex[Req, Res]) init() {
	x.seed = maphash.MakeSeed()
	x.tomb = new(job[Req, Res])
	x.slots.Store(newIndexSlots[Req, Res](minIndexCap))
}

// hash returns the hash of id.
func (x *jobIndex[Req, Res]) hash(id string) uint64 { return maphash.String(x.seed, id) }

// lookup returns the job filed under id, or nil. It takes no lock.
func (x *jobIndex[Req, Res]) lookup(id string) *job[Req, Res] {
	h := x.hash(id)
	s := *x.slots.Load()
	mask := uint64(len(s) - 1)
	for n, i := 0, h&mask; n < len(s); n, i = n+1, (i+1)&mask {
		j := s[i].job.Load()
		if j == nil {
			return nil
		}
		if j != x.tomb && s[i].hash.Load() == h && j.id == id {
			return j
		}
	}
	return nil // unreachable: an array always has an empty slot
}

// insertLocked files j under its id and reports true, or reports false,
// changing nothing, if the id is already filed.
// The caller must be the only writer (the Table holds Table.mu).
func (x *jobIndex[Req, Res]) insertLocked(j *job[Req, Res]) bool {
	if 4*(x.live+x.dead+1) > 3*len(*x.slots.Load()) {
		x.resizeLocked(x.live + 1)
	}
	h := x.hash(j.id)
	s := *x.slots.Load()
	mask := uint64(len(s) - 1)
	free := -1
	for n, i := 0, h&mask; n < len(s); n, i = n+1, (i+1)&mask {
		p := s[i].job.Load()
		if p == nil {
			if free < 0 {
				free = int(i)
			}
			break
		}
		if p == x.tomb {
			if free < 0 {
				free = int(i) // reuse the first removed slot on the path
			}
			continue
		}
		if s[i].hash.Load() == h && p.id == j.id {
			return false
		}
	}
	if s[free].job.Load() == x.tomb {
		x.dead--
	}
	j.hash = uint32(h)
	s[free].hash.Store(h) // the hash first: a reader that sees j sees its hash
	s[free].job.Store(j)
	x.live++
	return true
}

// removeLocked removes j, if it is filed, leaving a removed mark so that
// the probe paths through its slot stay whole. It finds j by the hash
// stored at its insertion and by pointer, so it reads neither j's id nor
// any other job: an evicted job is usually long out of the cache.
// The caller must be the only writer (the Table holds Table.mu).
func (x *jobIndex[Req, Res]) removeLocked(j *job[Req, Res]) {
	s := *x.slots.Load()
	mask := uint64(len(s) - 1)
	for n, i := 0, uint64(j.hash)&mask; n < len(s); n, i = n+1, (i+1)&mask {
		p := s[i].job.Load()
		if p == nil {
			return
		}
		if p == j {
			s[i].job.Store(x.tomb)
			x.live--
			x.dead++
			break
		}
	}
	if len(s) > minIndexCap && 8*x.live < len(s) {
		x.resizeLocked(x.live)
	}
}

// resizeLocked publishes a fresh array sized for n jobs, at most half
// full, holding the live jobs and no removed marks. Readers still probing
// the old array finish there; the writer never touches it again. Each
// resize copies the live jobs once, and the thresholds that trigger one
// (three quarters full counting removed marks; an eighth full) leave room
// for a number of writes proportional to the array before the next, so
// writes cost amortised O(1).
// The caller must be the only writer (the Table holds Table.mu).
func (x *jobIndex[Req, Res]) resizeLocked(n int) {
	c := max(minIndexCap, 1<<bits.Len(uint(2*max(n, 1)-1)))
	old, fresh := *x.slots.Load(), newIndexSlots[Req, Res](c)
	s := *fresh
	mask := uint64(c - 1)
	for k := range old {
		j := old[k].job.Load()
		if j == nil || j == x.tomb {
			continue
		}
		h := old[k].hash.Load()
		i := h & mask
		for s[i].job.Load() != nil { // bounded: c > live
			i = (i + 1) & mask
		}
		s[i].hash.Store(h)
		s[i].job.Store(j)
	}
	x.slots.Store(fresh)
	x.dead = 0
}

// all yields every job held. Without the writer's lock it sees each slot
// as it is when it gets there; under it, the whole index at one moment.
func (x *jobIndex[Req, Res]) all() iter.Seq[*job[Req, Res]] {
	return func(yield func(*job[Req, Res]) bool) {
		s := *x.slots.Load()
		for i := range s {
			if j := s[i].job.Load(); j != nil && j != x.tomb && !yield(j) {
				return
			}
		}
	}
}

// check reports the ways the index breaks its invariants.
// The caller must be the only writer (the Table holds Table.mu).
func (x *jobIndex[Req, Res]) check() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("index: "+format, args...))
	}
	s := *x.slots.Load()
	c := len(s)
	if c < minIndexCap || c&(c-1) != 0 {
		fail("%d slots: not a power of two of at least %d", c, minIndexCap)
		return errs
	}
	live, dead := 0, 0
	seen := map[string]bool{}
	for i := range s {
		j := s[i].job.Load()
		switch {
		case j == nil:
			continue
		case j == x.tomb:
			dead++
			continue
		}
		live++
		if seen[j.id] {
			fail("job %s held twice", j.id)
		}
		seen[j.id] = true
		h := x.hash(j.id)
		if j.hash != uint32(h) || s[i].hash.Load() != h {
			fail("job %s: hash %#x in the job and %#x in its slot, its id hashes to %#x", j.id, j.hash, s[i].hash.Load(), h)
		}
		for k := h & uint64(c-1); k != uint64(i); k = (k + 1) & uint64(c-1) {
			if s[k].job.Load() == nil {
				fail("job %s: an empty slot cuts its probe path", j.id)
				break
			}
		}
	}
	if live != x.live || dead != x.dead {
		fail("counts live %d, removed %d; slots hold %d and %d", x.live, x.dead, live, dead)
	}
	if live+dead >= c {
		fail("no empty slot among %d", c)
	}
	return errs
}
