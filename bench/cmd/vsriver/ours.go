package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// payload is every job's request and result on our side.
var payload = []byte("{}")

// recheck bounds how long an idle worker waits for the store's Work signal
// before it claims again, as the job server's claimer does.
const recheck = time.Second

// ours is the store of package store/postgres, used through the ledger's
// contract: Submit to insert; a worker loops Claim, then Finish.
type ours struct{}

func (ours) name() string { return "ours" }

// open opens a Store on the run's database as replica name.
func (ours) open(ctx context.Context, r *run, name string) (*postgres.Store, error) {
	return postgres.Open(ctx, r.dsn,
		ledger.Config{MaxQueue: r.set.jobs + r.set.latencyJobs()},
		postgres.Options{MaxConns: r.set.conns, Replica: name})
}

// submit inserts one job.
func submit(s *postgres.Store) func(context.Context) error {
	return func(ctx context.Context) error {
		_, _, err := s.Submit(ctx, ledger.Submission{}, payload)
		return err
	}
}

func (o ours) insertOnly(ctx context.Context, r *run) error {
	s, err := o.open(ctx, r, "r1")
	if err != nil {
		return err
	}
	defer s.Close()
	if err := r.start(ctx); err != nil {
		return err
	}
	if err := insertAll(ctx, r.set.jobs, r.set.inserters, submit(s)); err != nil {
		return err
	}
	r.stop(r.set.jobs)
	return nil
}

func (o ours) drain(ctx context.Context, r *run, replicas int) error {
	var stores []*postgres.Store
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	for i := range replicas {
		s, err := o.open(ctx, r, fmt.Sprintf("r%d", i+1))
		if err != nil {
			return err
		}
		stores = append(stores, s)
	}
	if err := insertAll(ctx, r.set.jobs, r.set.inserters, submit(stores[0])); err != nil {
		return fmt.Errorf("inserting the backlog: %w", err)
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	return o.measure(ctx, r, stores, nil)
}

func (o ours) insertThenDrain(ctx context.Context, r *run) error {
	s, err := o.open(ctx, r, "r1")
	if err != nil {
		return err
	}
	defer s.Close()
	if err := r.start(ctx); err != nil {
		return err
	}
	return o.measure(ctx, r, []*postgres.Store{s}, submit(s))
}

// measure runs r.set.workers workers on each store, and r.set.inserters
// goroutines calling insert r.set.jobs times if insert is not nil, and
// stops the clock once r.set.jobs jobs are finished.
func (o ours) measure(ctx context.Context, r *run, stores []*postgres.Store, insert func(context.Context) error) error {
	done := newTally(r.set.jobs)
	g, gctx := newGroup(ctx)
	wctx, stopWork := context.WithCancel(gctx)
	defer stopWork()
	for _, s := range stores {
		for range r.set.workers {
			g.run(func() error { return work(wctx, s, done.add) })
		}
	}
	if insert != nil {
		g.run(func() error { return insertAll(wctx, r.set.jobs, r.set.inserters, insert) })
	}
	ok := done.await(gctx)
	if ok {
		r.stop(r.set.jobs)
	}
	stopWork()
	if err := g.wait(); err != nil {
		return err
	}
	if !ok {
		return ctx.Err()
	}
	return nil
}

// work is a worker: it claims a job and finishes it, calling finished once
// the end has committed, until ctx ends (nil); with nothing to claim it
// waits for s.Work(), at most recheck. As jobapi's runner frees its worker
// when the model returns and records the end after, a worker claims its
// next job while its last job's end commits (one end in flight a worker),
// as River's executor leaves its completions to its completer. It returns
// the first error of the store.
func work(ctx context.Context, s *postgres.Store, finished func()) error {
	var ending chan error // the last job's end, if in flight
	settle := func() error {
		if ending == nil {
			return nil
		}
		err := <-ending
		ending = nil
		if err == nil {
			finished()
		}
		return err
	}
	for ctx.Err() == nil {
		snap, _, err := s.Claim(ctx)
		if errors.Is(err, ledger.ErrNoWork) {
			if err := settle(); err != nil {
				return unlessOver(ctx, err)
			}
			select {
			case <-s.Work():
			case <-time.After(recheck):
			case <-ctx.Done():
			}
			continue
		}
		if err == nil {
			err = settle()
		}
		if err != nil {
			settle()
			return unlessOver(ctx, err)
		}
		ending = make(chan error, 1)
		go func(id string, done chan<- error) {
			_, err := s.Finish(ctx, id, payload)
			done <- err
		}(snap.ID, ending)
	}
	return unlessOver(ctx, settle())
}

// unlessOver is err, or nil once ctx has ended (the run is over).
func unlessOver(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (o ours) latency(ctx context.Context, r *run) error {
	s, err := o.open(ctx, r, "r1")
	if err != nil {
		return err
	}
	defer s.Close()
	g, gctx := newGroup(ctx)
	wctx, stopWork := context.WithCancel(gctx)
	defer stopWork()
	for range r.set.workers {
		g.run(func() error { return work(wctx, s, func() {}) })
	}
	n := r.set.latencyJobs()
	r.lat = make([]time.Duration, n)
	err = r.start(gctx)
	if err == nil {
		err = paced(gctx, n, time.Second/time.Duration(r.set.rate), func(ctx context.Context, i int) error {
			t0 := time.Now()
			id, _, err := s.Submit(ctx, ledger.Submission{}, payload)
			if err != nil {
				return err
			}
			snap, err := s.Wait(ctx, id)
			if err != nil {
				return err
			}
			r.lat[i] = time.Since(t0)
			if snap.State != ledgertype.Done {
				return fmt.Errorf("job %s ended %v", id, snap.State)
			}
			return nil
		})
	}
	if err == nil {
		r.stop(n)
	}
	stopWork()
	if gerr := g.wait(); err == nil {
		err = gerr
	}
	return err
}
