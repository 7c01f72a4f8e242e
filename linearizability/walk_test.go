package linearizability_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	lin "github.com/jobledger/jobledger/linearizability"
)

// walkJobs are five jobs a to e admitted one after another at times 1-10,
// all held after every walk unless a case says otherwise.
func walkJobs(evicted ...string) []lin.WalkJob {
	var jobs []lin.WalkJob
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		jobs = append(jobs, lin.WalkJob{ID: id, SubmitCall: int64(2*i + 1), SubmitReturn: int64(2*i + 2), HeldAfter: true})
	}
	for k := range jobs {
		for _, e := range evicted {
			if jobs[k].ID == e {
				jobs[k].HeldAfter = false
			}
		}
	}
	return jobs
}

// TestWalkHistories: walks that must pass, and walks that must fail, each
// with the violation it must report. The offset cursor's two bugs are
// among the failures: after an admission between pages (f), the next page
// repeats a job; after an eviction above the cursor (e), it skips one.
func TestWalkHistories(t *testing.T) {
	withF := append(walkJobs(), lin.WalkJob{ID: "f", SubmitCall: 21, SubmitReturn: 22, HeldAfter: true})
	for _, tc := range []struct {
		name string
		jobs []lin.WalkJob
		walk lin.Walk
		want error // nil: must pass
	}{
		{"whole", walkJobs(), lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"c", "b"}, {"a"}}}, nil},
		{"admitted during the walk, not listed", withF,
			lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"c", "b"}, {"a"}}}, nil},
		{"evicted during the walk, not listed", walkJobs("b"),
			lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"c", "a"}}}, nil},
		{"evicted during the walk, listed first", walkJobs("e"),
			lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"c", "b"}, {"a"}}}, nil},
		{"offset after an admission: a repeat", withF,
			lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"d", "c"}, {"b", "a"}}}, lin.ErrWalkDuplicate},
		{"offset after an eviction: a skip", walkJobs("e"),
			lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d"}, {"b", "a"}}}, lin.ErrWalkSkipped},
		{"oldest first", walkJobs(), lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"a", "b", "c", "d", "e"}}}, lin.ErrWalkNotNewest},
		{"a job nobody submitted", walkJobs(), lin.Walk{Call: 20, Return: 30, Pages: [][]string{{"e", "d", "c", "b", "a", "z"}}}, lin.ErrWalkUnknownItem},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := lin.CheckWalk(tc.walk, tc.jobs)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// TestWalksRecorded records walks on the memory and the SQLite store while
// other goroutines admit and end jobs (the bound of three retained evicts
// them), and checks each walk; then checks that the same recording, with
// one page listed twice, fails.
func TestWalksRecorded(t *testing.T) {
	stores := recordedStores(ledger.Config{MaxQueue: 64, JobTTL: -1, MaxCompleted: 3})
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			defer l.Close()
			ctx := context.Background()
			var clock atomic.Int64
			var mu sync.Mutex
			var jobs []lin.WalkJob
			submit := func(end bool) error {
				call := clock.Add(1)
				id, _, err := l.Submit(ctx, ledger.Submission{TaskID: "t"}, "p")
				if errors.Is(err, ledger.ErrQueueFull) {
					return nil
				}
				if err != nil {
					return err
				}
				mu.Lock()
				jobs = append(jobs, lin.WalkJob{ID: id, SubmitCall: call, SubmitReturn: clock.Add(1)})
				mu.Unlock()
				if end {
					_, err = l.Fail(ctx, id, errors.New("done"))
				}
				return err
			}
			for i := range 20 {
				require.NoError(t, submit(i%2 == 0))
			}
			const walkers, churn = 2, 40
			walks := make([]lin.Walk, walkers)
			errs := make([]error, walkers+1)
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range churn {
					if errs[walkers] = submit(i%4 != 0); errs[walkers] != nil {
						return
					}
				}
			})
			for w := range walkers {
				wg.Go(func() {
					walks[w].Call = clock.Add(1)
					q := ledger.ListQuery{Limit: 2 + w}
					for range 1000 {
						p, err := l.List(ctx, q)
						if err != nil {
							errs[w] = err
							return
						}
						walks[w].Pages = append(walks[w].Pages, idsOfPage(p))
						if p.Next == "" {
							break
						}
						q.Cursor = p.Next
					}
					walks[w].Return = clock.Add(1)
				})
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			for k := range jobs {
				_, err := l.Snapshot(ctx, jobs[k].ID)
				jobs[k].HeldAfter = err == nil
			}
			for w, walk := range walks {
				require.NoError(t, lin.CheckWalk(walk, jobs), "walk %d", w)
				repeated := append(append([][]string{}, walk.Pages...), walk.Pages[0])
				require.ErrorIs(t, lin.CheckWalk(lin.Walk{Call: walk.Call, Return: walk.Return, Pages: repeated}, jobs),
					lin.ErrWalkDuplicate, "walk %d with its first page again", w)
			}
			requireInvariants(t, l)
		})
	}
}

func idsOfPage(p ledger.Page) []string {
	ids := make([]string, len(p.Jobs))
	for i, s := range p.Jobs {
		ids[i] = s.ID
	}
	return ids
}

// TestWalkAcrossAdmissions records, on each store, a walk with two jobs
// admitted between each page and the next, in that order and no other, and
// checks it. A cursor that counts the jobs already listed (an offset)
// lists a job twice here on every run: each admission pushes the listed
// jobs down by one, so the next page starts at one it already showed.
func TestWalkAcrossAdmissions(t *testing.T) {
	for name, open := range recordedStores(ledger.Config{MaxQueue: 64, JobTTL: -1, MaxCompleted: -1}) {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			defer l.Close()
			ctx := context.Background()
			var clock int64
			tick := func() int64 { clock++; return clock }
			var jobs []lin.WalkJob
			submit := func() {
				call := tick()
				id, _, err := l.Submit(ctx, ledger.Submission{TaskID: "t"}, "p")
				require.NoError(t, err)
				jobs = append(jobs, lin.WalkJob{ID: id, SubmitCall: call, SubmitReturn: tick()})
			}
			for range 8 {
				submit()
			}
			walk := lin.Walk{Call: tick()}
			q := ledger.ListQuery{Limit: 3}
			for range 20 {
				p, err := l.List(ctx, q)
				require.NoError(t, err)
				walk.Pages = append(walk.Pages, idsOfPage(p))
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
				submit()
				submit()
			}
			walk.Return = tick()
			for k := range jobs {
				_, err := l.Snapshot(ctx, jobs[k].ID)
				jobs[k].HeldAfter = err == nil
			}
			require.NoError(t, lin.CheckWalk(walk, jobs))
			requireInvariants(t, l)
		})
	}
}
