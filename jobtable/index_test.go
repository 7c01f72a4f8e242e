package jobtable

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

type testJob = job[struct{}, struct{}]

func newTestIndex() *jobIndex[struct{}, struct{}] {
	x := new(jobIndex[struct{}, struct{}])
	x.init()
	return x
}

func checkIndex(t *testing.T, x *jobIndex[struct{}, struct{}], step int) {
	t.Helper()
	require.NoError(t, errors.Join(x.check()...), "step %d", step)
}

func TestJobIndexBasics(t *testing.T) {
	x := newTestIndex()
	a, b := &testJob{id: "a"}, &testJob{id: "b"}
	require.Nil(t, x.lookup("a"))
	require.True(t, x.insertLocked(a))
	require.True(t, x.insertLocked(b))
	require.False(t, x.insertLocked(&testJob{id: "a"}), "a duplicate id is refused")
	require.Same(t, a, x.lookup("a"), "and changes nothing")
	require.Same(t, b, x.lookup("b"))
	x.removeLocked(a)
	x.removeLocked(&testJob{id: "missing"}) // a no-op
	require.Nil(t, x.lookup("a"))
	require.Same(t, b, x.lookup("b"))
	require.Equal(t, 1, x.live)
	require.True(t, x.insertLocked(a), "a removed id can be filed again")
	require.Same(t, a, x.lookup("a"))
	checkIndex(t, x, 0)
}

// TestJobIndexAgainstMap drives the index and a plain map with the same
// random inserts, duplicate inserts, removes and lookups, in phases that
// grow the index, churn it at a steady size (so removed marks pile up and
// get cleared) and shrink it, and compares them at every step.
func TestJobIndexAgainstMap(t *testing.T) {
	const steps = 30_000
	rng := rand.New(rand.NewPCG(3, 4))
	x := newTestIndex()
	ref := map[string]*testJob{}
	var ids []string // ids ever filed, present or not
	next := 0
	for step := range steps {
		phase := step / 5_000 // grow, churn, grow, churn, shrink, churn
		insertWeight := []int{8, 5, 8, 5, 2, 5}[phase]
		switch r := rng.IntN(10); {
		case r < insertWeight || len(ids) == 0:
			id := "j" + strconv.Itoa(next)
			next++
			j := &testJob{id: id}
			require.True(t, x.insertLocked(j), "step %d", step)
			ref[id] = j
			ids = append(ids, id)
		case r == 9:
			id := ids[rng.IntN(len(ids))]
			_, present := ref[id]
			require.Equal(t, !present, x.insertLocked(&testJob{id: id}), "step %d: insert %s", step, id)
			if !present {
				ref[id] = x.lookup(id)
			}
		default:
			id := ids[rng.IntN(len(ids))]
			if j := ref[id]; j != nil {
				x.removeLocked(j)
			} else {
				x.removeLocked(&testJob{id: id}) // not filed: a no-op
			}
			delete(ref, id)
		}
		probe := ids[rng.IntN(len(ids))]
		require.Same(t, ref[probe], x.lookup(probe), "step %d: lookup %s", step, probe)
		require.Nil(t, x.lookup("never"), "step %d", step)
		require.Equal(t, len(ref), x.live)
		if step%1999 == 0 {
			checkIndex(t, x, step)
			for id, j := range ref {
				require.Same(t, j, x.lookup(id), "step %d: lookup %s", step, id)
			}
		}
	}
	checkIndex(t, x, steps)
}

// TestJobIndexResizes: the array grows by doubling, stays at most three
// quarters full counting removed marks, shrinks when an eighth full, and
// over a long churn each write copies a bounded number of jobs.
func TestJobIndexResizes(t *testing.T) {
	x := newTestIndex()
	size := func() int { return len(*x.slots.Load()) }
	ops, copies := 0, 0
	write := func(f func()) {
		before, live := x.slots.Load(), x.live
		f()
		ops++
		if x.slots.Load() != before {
			copies += live
		}
	}
	const n = 10_000
	jobs := map[int]*testJob{}
	insert := func(k int) {
		jobs[k] = &testJob{id: strconv.Itoa(k)}
		x.insertLocked(jobs[k])
	}
	for i := range n {
		write(func() { insert(i) })
		require.LessOrEqual(t, 4*(x.live+x.dead), 3*size())
	}
	for round := range 5 { // steady churn: insert one, remove the oldest
		for i := range n {
			k := n*(round+1) + i
			write(func() { insert(k) })
			write(func() { x.removeLocked(jobs[k-n]) })
			require.LessOrEqual(t, 4*(x.live+x.dead), 3*size())
		}
	}
	require.Equal(t, n, x.live)
	big := size()
	for i := range n {
		write(func() { x.removeLocked(jobs[6*n+i-n]) })
	}
	require.Zero(t, x.live)
	require.Less(t, size(), big, "shrunk")
	require.Equal(t, minIndexCap, size())
	require.LessOrEqual(t, copies, 3*ops, "%d jobs copied for %d writes", copies, ops)
	checkIndex(t, x, 0)
}

func TestJobIndexCheckCatches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(x *jobIndex[struct{}, struct{}], s *indexSlots[struct{}, struct{}], at int)
	}{
		{"count", func(x *jobIndex[struct{}, struct{}], _ *indexSlots[struct{}, struct{}], _ int) { x.live++ }},
		{"hash", func(_ *jobIndex[struct{}, struct{}], s *indexSlots[struct{}, struct{}], at int) {
			(*s)[at].hash.Store((*s)[at].hash.Load() + 1)
		}},
		{"twice", func(_ *jobIndex[struct{}, struct{}], s *indexSlots[struct{}, struct{}], at int) {
			for i := range *s {
				if (*s)[i].job.Load() == nil {
					(*s)[i].hash.Store((*s)[at].hash.Load())
					(*s)[i].job.Store((*s)[at].job.Load())
					return
				}
			}
		}},
		{"cut path", func(x *jobIndex[struct{}, struct{}], s *indexSlots[struct{}, struct{}], _ int) {
			// Empty the first occupied slot that some later job's probe
			// path crosses.
			c := uint64(len(*s))
			for i := range *s {
				j := (*s)[i].job.Load()
				if j == nil {
					continue
				}
				if home := x.hash(j.id) & (c - 1); home != uint64(i) {
					(*s)[home].job.Store(nil)
					return
				}
			}
			panic("no job off its home slot")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newTestIndex()
			for i := range 20 { // 20 of 32 slots: some job sits off its home slot
				require.True(t, x.insertLocked(&testJob{id: strconv.Itoa(i)}))
			}
			checkIndex(t, x, 0)
			s := x.slots.Load()
			at := 0
			for (*s)[at].job.Load() == nil {
				at++
			}
			tc.corrupt(x, s, at)
			require.NotEmpty(t, x.check())
		})
	}
}

// TestJobIndexReadersDuringWrites runs lock-free readers against the one
// writer, which churns the index through many resizes. Jobs that are never
// removed must be found by every lookup, whatever array the reader probes;
// under -race, the readers' loads and the writer's stores must be ordered.
func TestJobIndexReadersDuringWrites(t *testing.T) {
	const (
		stable  = 64
		churn   = 20_000
		readers = 4
	)
	x := newTestIndex()
	var ids []string
	for i := range stable {
		id := "stable" + strconv.Itoa(i)
		require.True(t, x.insertLocked(&testJob{id: id}))
		ids = append(ids, id)
	}
	stop := make(chan struct{})
	errs := make(chan error, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				id := ids[(n+r)%stable]
				if j := x.lookup(id); j == nil || j.id != id {
					errs <- errors.New("lookup " + id + " missed a job that was never removed")
					return
				}
				_ = x.lookup("churn" + strconv.Itoa(n%churn)) // present or not
			}
		})
	}
	churned := make([]*testJob, churn)
	for i := range churn { // grows to thousands, then shrinks back
		churned[i] = &testJob{id: "churn" + strconv.Itoa(i)}
		x.insertLocked(churned[i])
		if i >= churn/2 {
			x.removeLocked(churned[2*(i-churn/2)])
			x.removeLocked(churned[2*(i-churn/2)+1])
		}
	}
	close(stop)
	wg.Wait()
	for range readers {
		require.NoError(t, <-errs)
	}
	require.Equal(t, stable, x.live)
	checkIndex(t, x, 0)
}
