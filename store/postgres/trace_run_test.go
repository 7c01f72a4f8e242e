//go:build postgres_trace

package postgres_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// The trace driver: short random runs of two or three replicas of the
// real store on one database, each logged as one trace for
// spec/trace-shared.mjs. In each round every serving replica's two
// submitters and its one worker (a Claim, then a Finish of the job
// claimed) race, with now and then a reaper's round of some replica beside
// them; between rounds the injected clock ticks, every serving replica
// renews its leases and one reaps, as their keepers do. Once in a run a
// replica is closed with the job its worker holds RUNNING, and opened
// again under its name some ticks later: before its lease lapsed (its
// restart fails the job) or after (another replica's reaper fails it).
//
//	scripts/pg run go test -tags postgres_trace -run '^TestTraceRuns$' ./store/postgres \
//	    -trace.dir DIR -trace.n 10 -trace.seed 1
var (
	traceDir    = flag.String("trace.dir", "", "write the traces to this folder")
	traceN      = flag.Int("trace.n", 2, "number of runs")
	traceSeed   = flag.Uint64("trace.seed", 1, "seed of the first run; run k uses seed+k")
	traceRounds = flag.Int("trace.rounds", 8, "rounds per run")
)

const (
	traceTick  = 20 * time.Minute // one tick of the injected clock
	traceLease = 3 * traceTick    // Options.Lease: the keepers' own rounds (every Lease/3 of real time) never come
	traceBase  = 1_000_000        // the clock's Unix seconds at tick 0
)

func TestTraceRuns(t *testing.T) {
	dir := *traceDir
	if dir == "" {
		dir = t.TempDir()
	}
	for k := range *traceN {
		seed := *traceSeed + uint64(k)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			head, body := traceRun(t, seed)
			if t.Failed() {
				return
			}
			f := filepath.Join(dir, fmt.Sprintf("postgres-%04d.ndjson", seed))
			if err := os.WriteFile(f, append(head, body...), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		if t.Failed() {
			return
		}
	}
}

// traceClock is a clock that moves one traceTick a tick.
type traceClock struct{ ticks atomic.Int64 }

func (c *traceClock) Now() time.Time {
	return time.Unix(traceBase, 0).Add(time.Duration(c.ticks.Load()) * traceTick)
}

// traceReplica is one replica: its store while it serves, and the job its
// worker holds.
type traceReplica struct {
	name string
	s    *postgres.Store
	held string
}

// traceRun runs one random workload with seed and returns the trace's
// header line and its events.
func traceRun(t *testing.T, seed uint64) (head, body []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x5ea1))
	clock := &traceClock{}
	ttl := 1 + rng.IntN(3)
	cfg := ledger.Config{
		MaxQueue:     2 + rng.IntN(3),
		MaxCompleted: 1 + rng.IntN(3),
		JobTTL:       time.Duration(ttl) * traceTick,
		Now:          clock.Now,
	}
	reps := make([]*traceReplica, 2+rng.IntN(2))
	names := make([]string, len(reps))
	for i := range reps {
		names[i] = fmt.Sprintf("r%d", i+1)
		reps[i] = &traceReplica{name: names[i]}
	}
	dsn := newDatabase(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func(r *traceReplica) {
		s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{Replica: r.name, Lease: traceLease, MaxConns: 4, Logger: logger})
		if err != nil {
			t.Fatalf("seed %d: opening %s: %v", seed, r.name, err)
		}
		r.s, r.held = s, ""
	}
	closeStore := func(r *traceReplica) {
		if err := r.s.Close(); err != nil {
			t.Errorf("seed %d: closing %s: %v", seed, r.name, err)
		}
		r.s, r.held = nil, ""
	}
	if err := postgres.TraceBegin(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range reps {
			if r.s != nil {
				closeStore(r)
			}
		}
		var err error
		if body, err = postgres.TraceEnd(); err != nil {
			t.Error(err)
		}
	}()
	for _, r := range reps {
		open(r)
	}
	// The victim goes down at the end of round crashAt and opens again
	// once downTicks ticks passed: after its job's lease lapsed (a
	// reaper's round follows every tick), or before.
	lease := int(traceLease / traceTick)
	rounds := max(*traceRounds, lease+4)
	victim := reps[rng.IntN(len(reps))]
	crashAt := rng.IntN(rounds - lease - 2)
	downTicks := 1 + rng.IntN(lease)
	if rng.IntN(2) == 0 {
		downTicks = lease + 1
	}
	since := 0 // ticks since the crash
	for round := range rounds {
		var wg sync.WaitGroup
		for i, r := range reps {
			if r.s == nil {
				continue
			}
			wr := rand.New(rand.NewPCG(seed, uint64(round*8+2*i+1)))
			steps := 1 + wr.IntN(2)
			for range 2 {
				subs := wr.IntN(3)
				wg.Go(func() {
					for range subs {
						if _, _, err := r.s.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req")); err != nil && !errors.Is(err, ledger.ErrQueueFull) {
							t.Errorf("seed %d: submit on %s: %v", seed, r.name, err)
						}
					}
				})
			}
			wg.Go(func() {
				for range steps {
					if err := traceWork(r); err != nil {
						t.Errorf("seed %d: worker of %s: %v", seed, r.name, err)
					}
				}
			})
		}
		if rng.IntN(3) == 0 {
			r := traceServing(rng, reps)
			wg.Go(func() {
				if _, err := r.s.Reap(ctx); err != nil {
					t.Errorf("seed %d: reaper of %s: %v", seed, r.name, err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return nil, nil
		}
		switch {
		case round == crashAt:
			if victim.held == "" { // a job RUNNING at the crash, if one is PENDING
				if err := traceWork(victim); err != nil {
					t.Errorf("seed %d: worker of %s: %v", seed, victim.name, err)
				}
			}
			closeStore(victim)
			since = 0
		case victim.s == nil && since >= downTicks:
			open(victim)
		}
		if victim.s == nil || rng.IntN(4) > 0 {
			clock.ticks.Add(1)
			since++
			for _, r := range reps {
				if r.s != nil {
					if err := r.s.Renew(ctx); err != nil {
						t.Errorf("seed %d: renewal of %s: %v", seed, r.name, err)
					}
				}
			}
		}
		if _, err := traceServing(rng, reps).s.Reap(ctx); err != nil {
			t.Errorf("seed %d: reaper: %v", seed, err)
		}
	}
	if victim.s == nil {
		open(victim)
	}
	for _, r := range reps {
		if err := r.s.CheckInvariants(); err != nil {
			t.Errorf("seed %d: %s: %v", seed, r.name, err)
		}
	}
	type config struct{ MaxQueue, MaxCompleted, TTL, Lease int }
	h, err := json.Marshal(struct {
		Config   config   `json:"config"`
		Tick     int64    `json:"tick"`
		Base     int64    `json:"base"`
		Seed     uint64   `json:"seed"`
		Replicas []string `json:"replicas"`
	}{config{cfg.MaxQueue, cfg.MaxCompleted, ttl, int(traceLease / traceTick)}, int64(traceTick),
		traceBase * int64(time.Second), seed, names})
	if err != nil {
		t.Fatal(err)
	}
	return append(h, '\n'), nil
}

// traceServing is a random replica that serves: the run keeps at least
// one serving at all times.
func traceServing(rng *rand.Rand, reps []*traceReplica) *traceReplica {
	k := rng.IntN(len(reps))
	for i := range reps {
		if r := reps[(k+i)%len(reps)]; r.s != nil {
			return r
		}
	}
	panic("no replica serves")
}

// traceWork is one step of r's worker: the end (DONE) of the job it holds,
// else a Claim. An error is an answer neither may get.
func traceWork(r *traceReplica) error {
	if r.held != "" {
		id := r.held
		r.held = ""
		if _, err := r.s.Finish(ctx, id, []byte("res")); err != nil && !errors.Is(err, ledger.ErrTerminal) {
			return err
		}
		return nil
	}
	snap, _, err := r.s.Claim(ctx)
	switch {
	case errors.Is(err, ledger.ErrNoWork):
		return nil
	case err != nil:
		return err
	}
	r.held = snap.ID
	return nil
}
