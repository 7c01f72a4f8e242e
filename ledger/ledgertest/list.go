package ledgertest

import (
	"encoding/base64"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The rules of listing (List).

// maxPages bounds every walk of the suite.
const maxPages = 1000

// walk lists every page of q from the first, failing the test on an error
// or on a page longer than the limit asks.
func (f *fixture) walk(q ledger.ListQuery) []ledger.Snapshot {
	f.t.Helper()
	return f.walkBetween(q, nil)
}

// walkBetween is walk, calling between (when not nil) after each page that
// another follows, with the page's number from 0, before the next is read.
func (f *fixture) walkBetween(q ledger.ListQuery, between func(page int)) []ledger.Snapshot {
	f.t.Helper()
	limit := q.Limit
	if limit == 0 {
		limit = ledger.DefaultListLimit
	}
	var all []ledger.Snapshot
	for n := range maxPages {
		page, err := f.l.List(f.ctx, q)
		require.NoError(f.t, err, "List(%+v)", q)
		require.LessOrEqual(f.t, len(page.Jobs), min(limit, ledger.MaxListLimit), "a page holds at most its limit")
		all = append(all, page.Jobs...)
		if page.Next == "" {
			return all
		}
		q.Cursor = page.Next
		if between != nil {
			between(n)
		}
	}
	f.t.Fatalf("a walk of %+v did not end in %d pages", q, maxPages)
	return nil
}

// idsOf returns the ids of snapshots, in order.
func idsOf(snaps []ledger.Snapshot) []string {
	out := make([]string, len(snaps))
	for i, s := range snaps {
		out[i] = s.ID
	}
	return out
}

// reversed returns ids newest first.
func reversed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[len(ids)-1-i] = id
	}
	return out
}

// testListNewestFirst: a walk by pages of two lists every job once,
// newest first by admission, each item the job's Snapshot; an empty store
// lists nothing.
func testListNewestFirst(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 8})
	require.Empty(t, f.walk(ledger.ListQuery{}))
	var admitted []string
	for i := range 5 {
		admitted = append(admitted, f.submit("t"+strconv.Itoa(i)))
	}
	f.must(f.l.Start(f.ctx, admitted[1]))
	f.must(f.l.Fail(f.ctx, admitted[3], errBoom))
	got := f.walk(ledger.ListQuery{Limit: 2})
	require.Equal(t, reversed(admitted), idsOf(got))
	for _, item := range got {
		require.Equal(t, f.snapshot(item.ID), item, "an item is the job's snapshot")
	}
}

// testListFilters: by state, by task id, and both at once, each listing
// exactly the jobs that match, newest first. A task id filter that is
// present is a filter: the empty task id lists the jobs submitted without
// one, not every job.
func testListFilters(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 16})
	done := f.toState(ledgertype.Done)
	pending := f.submit("other")
	untasked := f.submit("")
	running := f.toState(ledgertype.Running)
	failed := f.toState(ledgertype.Failed)
	done2 := f.toState(ledgertype.Done)
	for _, tc := range []struct {
		name string
		q    ledger.ListQuery
		want []string
	}{
		{"DONE", ledger.ListQuery{ByState: true, State: ledgertype.Done}, []string{done2, done}},
		{"PENDING", ledger.ListQuery{ByState: true, State: ledgertype.Pending}, []string{untasked, pending}},
		{"TIMEOUT", ledger.ListQuery{ByState: true, State: ledgertype.TimedOut}, []string{}},
		{"task", ledger.ListQuery{ByTaskID: true, TaskID: "task"}, []string{done2, failed, running, done}},
		{"task and state", ledger.ListQuery{ByTaskID: true, TaskID: "task", ByState: true, State: ledgertype.Running}, []string{running}},
		{"no such task", ledger.ListQuery{ByTaskID: true, TaskID: "nobody"}, []string{}},
		{"no task id", ledger.ListQuery{ByTaskID: true}, []string{untasked}},
		{"no task id and state", ledger.ListQuery{ByTaskID: true, ByState: true, State: ledgertype.Done}, []string{}},
		{"no filter", ledger.ListQuery{}, []string{done2, failed, running, untasked, pending, done}},
		{"by pages of one", ledger.ListQuery{ByTaskID: true, TaskID: "task", ByState: true, State: ledgertype.Done, Limit: 1}, []string{done2, done}},
	} {
		got := f.walk(tc.q)
		require.Equal(t, tc.want, append([]string{}, idsOf(got)...), tc.name)
		for _, item := range got {
			require.Equal(t, f.snapshot(item.ID), item, "%s: an item is the job's snapshot", tc.name)
		}
	}
}

// testListLimit: no page is longer than MaxListLimit whatever the limit
// asks, nor than DefaultListLimit with no limit; a walk at the cap still
// lists every job.
func testListLimit(t *testing.T, s Store) {
	n := ledger.MaxListLimit + 5
	f := open(t, s, ledger.Config{MaxQueue: n})
	for i := range n {
		f.submit("t" + strconv.Itoa(i))
	}
	page, err := f.l.List(f.ctx, ledger.ListQuery{Limit: 10 * ledger.MaxListLimit})
	require.NoError(t, err)
	require.LessOrEqual(t, len(page.Jobs), ledger.MaxListLimit, "the limit is capped")
	require.NotEmpty(t, page.Next, "more jobs follow")
	page, err = f.l.List(f.ctx, ledger.ListQuery{})
	require.NoError(t, err)
	require.LessOrEqual(t, len(page.Jobs), ledger.DefaultListLimit, "no limit is the default")
	require.Len(t, f.walk(ledger.ListQuery{Limit: 10 * ledger.MaxListLimit}), n)
}

// testListBadQuery: a negative limit, a state that is none and a task id
// without its filter are ErrBadQuery, a cursor no store made is
// ErrBadCursor, and neither changes anything.
func testListBadQuery(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 4})
	f.submit("t")
	stats := f.l.Stats()
	for name, q := range map[string]ledger.ListQuery{
		"negative limit":  {Limit: -1},
		"no such state":   {ByState: true, State: 7},
		"negative state":  {ByState: true, State: -1},
		"task id unasked": {TaskID: "t"},
	} {
		_, err := f.l.List(f.ctx, q)
		require.ErrorIs(t, err, ledger.ErrBadQuery, name)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	for name, c := range map[string]string{
		"garbage":           "not a cursor",
		"too short":         "AAAA",
		"too long":          b64(make([]byte, 9)),
		"padded":            b64(make([]byte, 8)) + "=",
		"ordinal zero":      b64(make([]byte, 8)),
		"beyond int64":      b64([]byte{0x80, 0, 0, 0, 0, 0, 0, 1}),
		"stray bits":        b64([]byte{0, 0, 0, 0, 0, 0, 0, 1})[:10] + "F",
		"standard alphabet": "AAAAAAAAA+/",
	} {
		_, err := f.l.List(f.ctx, ledger.ListQuery{Cursor: c})
		require.ErrorIs(t, err, ledger.ErrBadCursor, "%s: %q", name, c)
	}
	require.Equal(t, stats, f.l.Stats(), "a bad query changes nothing")
}

// testListCursorStable: between the pages of a walk, jobs are admitted
// and others evicted, above and below the cursor. The walk lists no job
// twice, lists every job retained throughout, and nothing admitted after
// the first page (its ordinal is above the cursor). A cursor that counted
// positions fails this: the eviction above it shifts the rest down.
func testListCursorStable(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 32, JobTTL: -1, MaxCompleted: 2})
	var live []string
	for i := range 6 {
		live = append(live, f.submit("live"+strconv.Itoa(i)))
	}
	a := f.toState(ledgertype.Done) // retained, then evicted mid-walk
	b := f.toState(ledgertype.Done)
	for i := range 4 {
		live = append(live, f.submit("live"+strconv.Itoa(6+i)))
	}
	// Newest first: live9..live6, b, a, live5..live0.
	var added []string
	got := f.walkBetween(ledger.ListQuery{Limit: 3}, func(page int) {
		// Between pages: end two jobs, so the bound of two evicts a and b
		// at the next admissions, and admit two.
		f.must(f.l.Fail(f.ctx, live[len(live)-1-page], errBoom))
		added = append(added, f.submit("new"), f.submit("new"))
	})
	listed := map[string]int{}
	for _, item := range got {
		listed[item.ID]++
		require.Equal(t, 1, listed[item.ID], "job %s listed twice", item.ID)
	}
	for _, id := range live {
		require.Contains(t, listed, id, "job %s, retained throughout, was skipped", id)
	}
	for _, id := range added {
		require.NotContains(t, listed, id, "job %s was admitted after the first page", id)
	}
	require.False(t, f.held(a) && listed[a] == 0, "job a, still held, was skipped")
	require.False(t, f.held(b) && listed[b] == 0, "job b, still held, was skipped")
}

// testListStateDuringWalk: a walk filtered by RUNNING, by pages of one,
// while between its pages a PENDING job starts and a RUNNING one ends
// (spec/Listing.tla with Filter "RUNNING"). Each item was RUNNING when its
// page read it, no job is listed twice, the walk goes newest first, and
// every job RUNNING for the whole walk is listed; a job that started or
// ended during it may be listed or not.
func testListStateDuringWalk(t *testing.T, s Store) {
	f := open(t, s, ledger.Config{MaxQueue: 32, JobTTL: -1, MaxCompleted: -1})
	var order, steady, starting, ending []string // order: by admission
	for i := range 4 {
		steady = append(steady, f.toState(ledgertype.Running))
		starting = append(starting, f.submit("starting"))
		ending = append(ending, f.toState(ledgertype.Running))
		order = append(order, steady[i], starting[i], ending[i])
	}
	rank := map[string]int{}
	for i, id := range order {
		rank[id] = i
	}
	got := f.walkBetween(ledger.ListQuery{ByState: true, State: ledgertype.Running, Limit: 1}, func(page int) {
		if page < len(starting) { // below the cursor, oldest first
			f.must(f.l.Start(f.ctx, starting[page]))
			f.must(f.l.Finish(f.ctx, ending[page], "result"))
		}
	})
	listed := map[string]bool{}
	for i, item := range got {
		require.Equal(t, ledgertype.Running, item.State, "job %s listed in state %v", item.ID, item.State)
		require.False(t, listed[item.ID], "job %s listed twice", item.ID)
		listed[item.ID] = true
		if i > 0 {
			require.Greater(t, rank[got[i-1].ID], rank[item.ID], "not newest first")
		}
	}
	for _, id := range steady {
		require.True(t, listed[id], "job %s, RUNNING throughout, was skipped", id)
	}
}

// testListSurvivesRestart: a durable store keeps the admission order, so
// a cursor taken before a restart resumes the walk after it.
func testListSurvivesRestart(t *testing.T, s Store) {
	if s.Restart == nil {
		t.Skip("the store does not survive a restart")
	}
	f := open(t, s, ledger.Config{MaxQueue: 8})
	var admitted []string
	for i := range 4 {
		admitted = append(admitted, f.submit("t"+strconv.Itoa(i)))
	}
	p, err := f.l.List(f.ctx, ledger.ListQuery{Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{admitted[3], admitted[2]}, idsOf(p.Jobs))
	f.restart()
	newer := f.submit("after")
	q := ledger.ListQuery{Limit: 2, Cursor: p.Next}
	rest := f.walk(q)
	require.Equal(t, []string{admitted[1], admitted[0]}, idsOf(rest))
	require.Equal(t, newer, idsOf(f.walk(ledger.ListQuery{Limit: 1}))[0], "the newest job, admitted after the restart, comes first")
}

// testListRace: walks run while other goroutines admit, end and (by the
// bound on retained jobs) evict. Each walk lists no job twice; lists every
// job retained throughout it (the live jobs admitted before it, and every
// ended one still held after it), in admission order; and each item is a
// snapshot the job had: its identity and creation as Snapshot says, and,
// for a terminal item, the final snapshot itself while the job is held.
func testListRace(t *testing.T, s Store) {
	const live, churn, walkers = 12, 30, 2
	f := open(t, s, ledger.Config{MaxQueue: live + 4, JobTTL: -1, MaxCompleted: 3})
	var before []string
	for i := range live {
		before = append(before, f.submit("live"+strconv.Itoa(i)))
		if i%3 == 0 {
			before = append(before, f.toState(ledgertype.Done))
		}
	}
	walks := make([][]ledger.Snapshot, walkers)
	errs := make([]error, walkers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		for i := range churn {
			id, _, err := f.l.Submit(f.ctx, ledger.Submission{TaskID: "churn"}, payload("churn"))
			if err != nil {
				continue // the queue is full for a moment: a walker's view does not depend on it
			}
			if i%2 == 0 {
				_, _ = f.l.Start(f.ctx, id)
			}
			_, _ = f.l.Finish(f.ctx, id, "r")
		}
	})
	for w := range walkers {
		wg.Go(func() {
			<-start
			q := ledger.ListQuery{Limit: 2 + w}
			for range maxPages {
				p, err := f.l.List(f.ctx, q)
				if err != nil {
					errs[w] = err
					return
				}
				walks[w] = append(walks[w], p.Jobs...)
				if p.Next == "" {
					return
				}
				q.Cursor = p.Next
			}
		})
	}
	close(start)
	wg.Wait()
	for w, got := range walks {
		require.NoError(t, errs[w])
		listed := map[string]int{}
		for i, item := range got {
			require.Zero(t, listed[item.ID], "walk %d: job %s listed twice", w, item.ID)
			listed[item.ID] = i + 1
			now, err := f.l.Snapshot(f.ctx, item.ID)
			if err != nil {
				require.ErrorIs(t, err, ledger.ErrNotFound)
				continue // evicted since: terminal, as listed or later
			}
			require.Equal(t, now.TaskID, item.TaskID)
			require.True(t, now.CreatedAt.Equal(item.CreatedAt))
			require.False(t, item.State.Terminal() && !now.State.Terminal(), "walk %d: job %s ended, then lived", w, item.ID)
			if item.State.Terminal() {
				require.Equal(t, now, item, "walk %d: a terminal item is the final snapshot", w)
			}
		}
		prev := len(got) + 1
		for _, id := range before {
			if !f.held(id) {
				continue // evicted during the walk: it may or may not be listed
			}
			at := listed[id]
			require.NotZero(t, at, "walk %d: job %s, retained throughout, was skipped", w, id)
			require.Less(t, at, prev, "walk %d: job %s listed before a newer one", w, id)
			prev = at
		}
	}
}
