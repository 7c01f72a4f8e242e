package linearizability_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	lin "github.com/jobledger/jobledger/linearizability"
)

// keySubmit and keyEnd are operations of a hand-written key history.
func keySubmit(key, digest string, out lin.KeyOutput, call, ret int64) porcupine.Operation {
	return porcupine.Operation{Input: lin.KeyInput{Op: lin.KeySubmit, Key: key, Digest: digest}, Output: out, Call: call, Return: ret}
}

func keyEnd(key, id string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{Input: lin.KeyInput{Op: lin.KeyEnd, Key: key, ID: id}, Output: lin.KeyOutput{Outcome: lin.OK}, Call: call, Return: ret}
}

var (
	created  = func(id string) lin.KeyOutput { return lin.KeyOutput{ID: id, Outcome: lin.OK} }
	replayed = func(id string) lin.KeyOutput { return lin.KeyOutput{ID: id, Replayed: true, Outcome: lin.OK} }
	conflict = lin.KeyOutput{Outcome: lin.KeyConflict}
	full     = lin.KeyOutput{Outcome: lin.QueueFull}
)

// TestKeyHistories: key histories that must pass KeyModel and histories
// that must fail it, each failure with its visualization written. Each
// clause of KeyModel (keyClauses) is pinned: removing it lets some
// must-fail history pass.
func TestKeyHistories(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"replay-ok", true, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "d", replayed("j1"), 2, 3),
			keySubmit("k", "e", conflict, 4, 5)}},
		{"concurrent-new-key-ok", true, []porcupine.Operation{
			// Overlapping: either may be the one that created the job.
			keySubmit("k", "d", replayed("j1"), 0, 3), keySubmit("k", "d", created("j1"), 1, 2)}},
		{"new-job-after-end-ok", true, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keyEnd("k", "j1", 2, 3),
			keySubmit("k", "d", replayed("j1"), 4, 5), // not evicted yet
			keySubmit("k", "e", created("j2"), 6, 7),  // evicted meanwhile
			keySubmit("k", "e", replayed("j2"), 8, 9)}},
		{"full-frees-an-ended-key-ok", true, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keyEnd("k", "j1", 2, 3), keySubmit("k", "d", full, 4, 5)}},
		{"two-jobs-one-key-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "d", created("j2"), 2, 3)}},
		{"concurrent-both-created-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 2), keySubmit("k", "d", created("j2"), 1, 3)}},
		{"replay-of-another-id-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "d", replayed("j9"), 2, 3)}},
		{"replay-other-digest-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "e", replayed("j1"), 2, 3)}},
		{"conflict-same-digest-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "d", conflict, 2, 3)}},
		{"full-while-held-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keySubmit("k", "d", full, 2, 3)}},
		{"replay-after-its-eviction-bad", false, []porcupine.Operation{
			keySubmit("k", "d", created("j1"), 0, 1), keyEnd("k", "j1", 2, 3),
			keySubmit("k", "e", created("j2"), 4, 5), keySubmit("k", "d", replayed("j1"), 6, 7)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, err := lin.CheckKeys(c.h, 10*time.Second, dir)
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.FileExists(t, path)
			require.Equal(t, dir, filepath.Dir(path))
		})
	}
	for c, clause := range lin.KeyClauses {
		var pins []string
		for _, h := range cases {
			if !h.ok && porcupine.CheckOperations(lin.KeyModelWithout(c), h.h) {
				pins = append(pins, h.name)
			}
		}
		if len(pins) == 0 {
			t.Errorf("KeyModel clause %s is vacuous: every must-fail key history still fails without it", clause)
			continue
		}
		t.Logf("%-24s pinned by %v", clause, pins)
	}
}

// keyRecorder records a key history with a logical clock.
type keyRecorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func (r *keyRecorder) add(in lin.KeyInput, call int64, out lin.KeyOutput) {
	ret := r.clock.Add(1)
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{Input: in, Output: out, Call: call, Return: ret})
	r.mu.Unlock()
}

// TestKeyHistoriesRecorded runs concurrent SubmitKeyed calls (a few keys,
// two digests each) and ends of their jobs on each store, with retention
// that evicts, records the history and checks it against KeyModel.
func TestKeyHistoriesRecorded(t *testing.T) {
	stores := recordedStores(ledger.Config{MaxQueue: 4, JobTTL: -1, MaxCompleted: 2})
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			defer l.Close()
			ctx := context.Background()
			rec := &keyRecorder{}
			const workers, rounds = 4, 30
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range rounds {
						key := "k" + strconv.Itoa((w+i)%3)
						digest := "d" + strconv.Itoa(i%2)
						call := rec.clock.Add(1)
						id, again, err := l.Submit(ctx, ledger.Submission{TaskID: "t", Key: key, Digest: digest}, "p")
						out := lin.KeyOutput{ID: id, Replayed: again, Outcome: lin.OK}
						switch {
						case errors.Is(err, ledger.ErrKeyConflict):
							out = lin.KeyOutput{Outcome: lin.KeyConflict}
						case errors.Is(err, ledger.ErrQueueFull):
							out = lin.KeyOutput{Outcome: lin.QueueFull}
						case err != nil:
							t.Error(err)
							return
						}
						rec.add(lin.KeyInput{Op: lin.KeySubmit, Key: key, Digest: digest}, call, out)
						if out.Outcome == lin.OK && !again && i%3 != 0 {
							call := rec.clock.Add(1)
							if _, err := l.Fail(ctx, id, errors.New("done")); err != nil && !errors.Is(err, ledger.ErrTerminal) {
								t.Error(err)
								return
							}
							rec.add(lin.KeyInput{Op: lin.KeyEnd, Key: key, ID: id}, call, lin.KeyOutput{Outcome: lin.OK})
						}
					}
				})
			}
			wg.Wait()
			path, err := lin.CheckKeys(rec.ops, time.Minute, t.TempDir())
			require.NoError(t, err, "visualization: %s", path)
			requireInvariants(t, l)
		})
	}
}

// TestKeyRaceRecorded records, on each store, rounds of eight SubmitKeyed
// calls released together on a fresh key, each round's job then ended, and
// checks the history against KeyModel: one call of a round creates the job
// and the others replay it. Many short rounds, as the conformance suite's
// Race/OneJobPerKey runs them: a store that checks the key and admits in
// two steps loses the race only when two calls meet between them.
func TestKeyRaceRecorded(t *testing.T) {
	const callers = 8
	for name, open := range recordedStores(ledger.Config{MaxQueue: callers, JobTTL: -1, MaxCompleted: -1}) {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			defer l.Close()
			ctx := context.Background()
			rec := &keyRecorder{}
			start := time.Now()
			for round := 0; round < 2000 && (round < 100 || time.Since(start) < 300*time.Millisecond); round++ {
				key := "k" + strconv.Itoa(round)
				ids := make([]string, callers)
				var wg sync.WaitGroup
				release := make(chan struct{})
				for i := range callers {
					wg.Go(func() {
						<-release
						call := rec.clock.Add(1)
						id, again, err := l.Submit(ctx, ledger.Submission{TaskID: "t", Key: key, Digest: "d"}, "p")
						if err != nil {
							t.Error(err)
							return
						}
						ids[i] = id
						rec.add(lin.KeyInput{Op: lin.KeySubmit, Key: key, Digest: "d"}, call, lin.KeyOutput{ID: id, Replayed: again, Outcome: lin.OK})
					})
				}
				close(release)
				wg.Wait()
				if t.Failed() {
					return
				}
				slices.Sort(ids)
				for _, id := range slices.Compact(ids) {
					call := rec.clock.Add(1)
					if _, err := l.Fail(ctx, id, errors.New("done")); err != nil && !errors.Is(err, ledger.ErrTerminal) {
						t.Fatal(err)
					}
					rec.add(lin.KeyInput{Op: lin.KeyEnd, Key: key, ID: id}, call, lin.KeyOutput{Outcome: lin.OK})
				}
			}
			path, err := lin.CheckKeys(rec.ops, time.Minute, t.TempDir())
			require.NoError(t, err, "visualization: %s", path)
		})
	}
}
