//go:build sqlite_trace

package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// The trace driver: short random runs of the real store, each logged as
// one trace for spec/trace-durable.mjs. Workers race on one store with
// submits (with and without idempotency keys, some replays, some
// conflicts), starts, ends and cancels of any job admitted so far, and
// ticks of the clock, against a small queue, retention bound and TTL;
// between rounds the store is closed, with jobs RUNNING, and opened again.
//
//	go test -tags sqlite_trace -run '^TestTraceRuns$' ./store/sqlite \
//	    -trace.dir DIR -trace.n 20 -trace.seed 1
var (
	traceDir    = flag.String("trace.dir", "", "write the traces to this folder")
	traceN      = flag.Int("trace.n", 2, "number of runs")
	traceSeed   = flag.Uint64("trace.seed", 1, "seed of the first run; run k uses seed+k")
	traceRounds = flag.Int("trace.rounds", 3, "rounds per run, a restart between each two")
	traceOps    = flag.Int("trace.ops", 10, "calls per worker and round")
)

const (
	traceWorkers = 4
	traceBase    = 1_000_000 // the clock's Unix seconds at tick 0
)

func TestTraceRuns(t *testing.T) {
	dir := *traceDir
	if dir == "" {
		dir = t.TempDir()
	}
	for k := range *traceN {
		seed := *traceSeed + uint64(k)
		head, body := traceRun(t, seed)
		if t.Failed() {
			return
		}
		f := filepath.Join(dir, fmt.Sprintf("sqlite-%04d.ndjson", seed))
		if err := os.WriteFile(f, append(head, body...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// traceClock is a clock that moves one whole second a tick.
type traceClock struct{ ticks atomic.Int64 }

func (c *traceClock) Now() time.Time { return time.Unix(traceBase+c.ticks.Load(), 0) }

// traceRun runs one random workload with seed and returns the trace's
// header line and its events.
func traceRun(t *testing.T, seed uint64) (head, body []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	clock := &traceClock{}
	ttl := 2 + rng.IntN(3)
	cfg := ledger.Config{
		MaxQueue:     2 + rng.IntN(3),
		MaxCompleted: 1 + rng.IntN(3),
		JobTTL:       time.Duration(ttl) * time.Second,
		Now:          clock.Now,
	}
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	var (
		mu  sync.Mutex
		ids []string // every job admitted so far
	)
	pick := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return "none"
		}
		return ids[r.IntN(len(ids))]
	}
	sqlite.TraceBegin()
	defer func() {
		var err error
		if body, err = sqlite.TraceEnd(); err != nil {
			t.Error(err)
		}
	}()
	for round := range *traceRounds {
		s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
		if err != nil {
			t.Fatalf("seed %d, round %d: %v", seed, round, err)
		}
		var wg sync.WaitGroup
		for w := range traceWorkers {
			r := rand.New(rand.NewPCG(seed, uint64(round*traceWorkers+w+1)))
			wg.Go(func() {
				for range *traceOps {
					if err := traceCall(ctx, s, r, clock, pick, func(id string) {
						mu.Lock()
						ids = append(ids, id)
						mu.Unlock()
					}); err != nil {
						t.Errorf("seed %d, round %d: %v", seed, round, err)
						return
					}
				}
			})
		}
		wg.Wait()
		// A job RUNNING at the restart, if one is PENDING.
		for range 3 {
			if _, err := s.Start(ctx, pick(rng)); err == nil {
				break
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		clock.ticks.Add(int64(rng.IntN(2)))
	}
	// A last Open, which fails the jobs left RUNNING.
	s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
	if err != nil {
		t.Fatalf("seed %d, last open: %v", seed, err)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Errorf("seed %d: %v", seed, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	type config struct{ MaxQueue, MaxCompleted, TTL int }
	h, err := json.Marshal(struct {
		Config config `json:"config"`
		Tick   int64  `json:"tick"`
		Base   int64  `json:"base"`
		Seed   uint64 `json:"seed"`
	}{config{cfg.MaxQueue, cfg.MaxCompleted, ttl}, int64(time.Second), traceBase * int64(time.Second), seed})
	if err != nil {
		t.Fatal(err)
	}
	return append(h, '\n'), nil
}

// traceCall makes one random call on s; an error is an answer no call
// may get.
func traceCall(ctx context.Context, s *sqlite.Store, r *rand.Rand, clock *traceClock,
	pick func(*rand.Rand) string, admitted func(string)) error {
	var err error
	switch n := r.IntN(20); {
	case n < 5:
		var id string
		if id, _, err = s.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req")); err == nil {
			admitted(id)
		}
	case n < 8:
		// A few keys, mostly with one digest: admissions, replays,
		// conflicts.
		digest := "d"
		if r.IntN(5) == 0 {
			digest = "e"
		}
		var id string
		var replay bool
		id, replay, err = s.Submit(ctx, ledger.Submission{TaskID: "task", Key: fmt.Sprintf("key%d", r.IntN(4)), Digest: digest}, []byte("req"))
		if err == nil && !replay {
			admitted(id)
		}
	case n < 12:
		_, err = s.Start(ctx, pick(r))
	case n < 15:
		_, err = s.Finish(ctx, pick(r), []byte("res"))
	case n < 17:
		_, err = s.Fail(ctx, pick(r), errors.New("cancelled"))
	case n < 18:
		_, err = s.Timeout(ctx, pick(r), errors.New("deadline"))
	default:
		clock.ticks.Add(1)
	}
	for _, ok := range []error{ledger.ErrQueueFull, ledger.ErrNotFound, ledger.ErrNotPending,
		ledger.ErrTerminal, ledger.ErrKeyConflict} {
		if errors.Is(err, ok) {
			return nil
		}
	}
	return err
}
