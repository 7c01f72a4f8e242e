package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// fastCooldown is River's FetchCooldown for the throughput workloads; its
// default (100 ms) caps a client with 8 workers near 80 jobs a second.
const fastCooldown = time.Millisecond

// backlogBatch is how many jobs one InsertMany of River's backlog inserts.
const backlogBatch = 1000

// noopArgs is River's job: no fields, so its args are {}.
type noopArgs struct{}

func (noopArgs) Kind() string { return "vsriver_noop" }

// noopWorker completes every job at once.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// quiet is River's logger: warnings and errors, to stderr.
var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// riverSide is River with its pgx v5 driver: Insert to insert; its
// producers and completer work the jobs.
type riverSide struct{}

func (riverSide) name() string { return "river" }

// riverClient is a River client on a pool of its own, subscribed to its
// completed jobs.
type riverClient struct {
	pool   *pgxpool.Pool
	c      *river.Client[pgx.Tx]
	events <-chan *river.Event
	unsub  func()
}

// newRiverClient opens a pool of r.set.conns connections and a client
// named id with r.set.workers workers, River's FetchCooldown set to
// fastCooldown if fast, subscribed to its completed jobs with room for
// every job of the run; migrate runs River's migrations first.
func newRiverClient(ctx context.Context, r *run, id string, fast, migrate bool) (*riverClient, error) {
	pcfg, err := pgxpool.ParseConfig(r.dsn)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = r.set.conns
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	driver := riverpgxv5.New(pool)
	if migrate {
		m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet})
		if err == nil {
			_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		}
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("migrating River's schema: %w", err)
		}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	cfg := &river.Config{
		ID:      id,
		Logger:  quiet,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: r.set.workers}},
		Workers: workers,
	}
	if fast {
		cfg.FetchCooldown = fastCooldown
	}
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	events, unsub := c.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: r.set.jobs + r.set.latencyJobs() + 100,
		Kinds:    []river.EventKind{river.EventKindJobCompleted},
	})
	return &riverClient{pool: pool, c: c, events: events, unsub: unsub}, nil
}

// close stops the client (a no-op if it never started), waiting at most
// 30 s for a graceful stop and then cancelling its work, and closes its
// pool.
func (rc *riverClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rc.c.Stop(ctx); err != nil {
		hard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rc.c.StopAndCancel(hard); err != nil {
			fmt.Fprintln(os.Stderr, "vsriver: River client did not stop:", err)
		}
	}
	rc.unsub()
	rc.pool.Close()
}

// insert inserts one job.
func (rc *riverClient) insert(ctx context.Context) error {
	_, err := rc.c.Insert(ctx, noopArgs{}, nil)
	return err
}

// count calls f for every completed job's event until ctx ends.
func (rc *riverClient) count(ctx context.Context, f func(*river.Event)) error {
	for {
		select {
		case ev, ok := <-rc.events:
			if !ok {
				return errors.New("River closed a subscription")
			}
			f(ev)
		case <-ctx.Done():
			return nil
		}
	}
}

// clients opens n clients named r1..rn on the run's database, the first
// migrating it; closeAll closes those opened, also on an error.
func clients(ctx context.Context, r *run, n int, fast bool) (cs []*riverClient, closeAll func(), err error) {
	closeAll = func() {
		for _, c := range cs {
			c.close()
		}
	}
	for i := range n {
		c, err := newRiverClient(ctx, r, fmt.Sprintf("r%d", i+1), fast, i == 0)
		if err != nil {
			return cs, closeAll, err
		}
		cs = append(cs, c)
	}
	return cs, closeAll, nil
}

func (riverSide) insertOnly(ctx context.Context, r *run) error {
	cs, closeAll, err := clients(ctx, r, 1, true)
	defer closeAll()
	if err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	if err := insertAll(ctx, r.set.jobs, r.set.inserters, cs[0].insert); err != nil {
		return err
	}
	r.stop(r.set.jobs)
	return nil
}

func (rs riverSide) drain(ctx context.Context, r *run, replicas int) error {
	cs, closeAll, err := clients(ctx, r, replicas, true)
	defer closeAll()
	if err != nil {
		return err
	}
	batch := make([]river.InsertManyParams, 0, backlogBatch)
	for left := r.set.jobs; left > 0; left -= len(batch) {
		batch = batch[:0]
		for range min(left, backlogBatch) {
			batch = append(batch, river.InsertManyParams{Args: noopArgs{}})
		}
		if _, err := cs[0].c.InsertMany(ctx, batch); err != nil {
			return fmt.Errorf("inserting the backlog: %w", err)
		}
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	return rs.measure(ctx, r, cs, nil)
}

func (rs riverSide) insertThenDrain(ctx context.Context, r *run) error {
	cs, closeAll, err := clients(ctx, r, 1, true)
	defer closeAll()
	if err != nil {
		return err
	}
	if err := cs[0].c.Start(ctx); err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	return rs.measure(ctx, r, cs, cs[0].insert)
}

// measure starts the clients (a started one is left as it is), runs
// r.set.inserters goroutines calling insert r.set.jobs times if insert is
// not nil, and stops the clock once r.set.jobs jobs are completed, as
// their events tell.
func (riverSide) measure(ctx context.Context, r *run, cs []*riverClient, insert func(context.Context) error) error {
	done := newTally(r.set.jobs)
	g, gctx := newGroup(ctx)
	cctx, stopCount := context.WithCancel(gctx)
	defer stopCount()
	for _, c := range cs {
		g.run(func() error { return c.count(cctx, func(*river.Event) { done.add() }) })
	}
	for _, c := range cs {
		if err := c.c.Start(ctx); err != nil {
			stopCount()
			_ = g.wait() // the counters end with cctx, without an error
			return err
		}
	}
	if insert != nil {
		g.run(func() error { return insertAll(cctx, r.set.jobs, r.set.inserters, insert) })
	}
	ok := done.await(gctx)
	if ok {
		r.stop(r.set.jobs)
	}
	stopCount()
	if err := g.wait(); err != nil {
		return err
	}
	if !ok {
		return ctx.Err()
	}
	return nil
}

func (riverSide) latency(ctx context.Context, r *run) error {
	cs, closeAll, err := clients(ctx, r, 1, false)
	defer closeAll()
	if err != nil {
		return err
	}
	c := cs[0]
	if err := c.c.Start(ctx); err != nil {
		return err
	}
	n := r.set.latencyJobs()
	var (
		mu       sync.Mutex
		inserted = make(map[int64]time.Time, n) // job id -> when its insert began
		seen     = make(map[int64]time.Time, n) // job id -> when its event came
	)
	done := newTally(n)
	g, gctx := newGroup(ctx)
	cctx, stopCount := context.WithCancel(gctx)
	defer stopCount()
	g.run(func() error {
		return c.count(cctx, func(ev *river.Event) {
			now := time.Now()
			mu.Lock()
			seen[ev.Job.ID] = now
			mu.Unlock()
			done.add()
		})
	})
	err = r.start(gctx)
	if err == nil {
		err = paced(gctx, n, time.Second/time.Duration(r.set.rate), func(ctx context.Context, _ int) error {
			t0 := time.Now()
			res, err := c.c.Insert(ctx, noopArgs{}, nil)
			if err != nil {
				return err
			}
			mu.Lock()
			inserted[res.Job.ID] = t0
			mu.Unlock()
			return nil
		})
	}
	if err == nil && !done.await(gctx) {
		err = fmt.Errorf("%d of %d jobs completed: %w", done.count.Load(), n, context.Cause(gctx))
	}
	if err == nil {
		r.stop(n)
	}
	stopCount()
	if gerr := g.wait(); err == nil {
		err = gerr
	}
	if err != nil {
		return err
	}
	for id, t0 := range inserted {
		t1, ok := seen[id]
		if !ok {
			return fmt.Errorf("no completion seen for job %d", id)
		}
		r.lat = append(r.lat, t1.Sub(t0))
	}
	return nil
}
