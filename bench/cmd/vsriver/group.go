package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// group runs goroutines and keeps the first error; the first error cancels
// the group's context, and wait returns once every goroutine has ended.
type group struct {
	wg     sync.WaitGroup
	once   sync.Once
	err    error // set once, under once
	cancel context.CancelFunc
}

// newGroup returns a group and its context, derived from ctx.
func newGroup(ctx context.Context) (*group, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &group{cancel: cancel}, ctx
}

// run starts f in a goroutine of the group.
func (g *group) run(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.once.Do(func() { g.err = err; g.cancel() })
		}
	}()
}

// wait waits for every goroutine of the group, cancels its context and
// returns the first error.
func (g *group) wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}

// tally counts jobs done and closes done when the count reaches n.
type tally struct {
	n     int64
	count atomic.Int64
	done  chan struct{}
}

func newTally(n int) *tally { return &tally{n: int64(n), done: make(chan struct{})} }

// add counts one job.
func (t *tally) add() {
	if t.count.Add(1) == t.n {
		close(t.done)
	}
}

// await blocks until the count reaches n (true) or ctx ends (false).
func (t *tally) await(ctx context.Context) bool {
	select {
	case <-t.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// insertAll calls insert n times in all, from k goroutines at once, and
// returns the first error; after an error no further call starts.
func insertAll(ctx context.Context, n, k int, insert func(context.Context) error) error {
	g, ctx := newGroup(ctx)
	var next atomic.Int64
	for range k {
		g.run(func() error {
			for next.Add(1) <= int64(n) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := insert(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.wait()
}

// paced calls f(i) for i from 0 to n-1, each in a goroutine of its own,
// started at t0 + i·every (or at once when behind); it returns the first
// error once every call has returned.
func paced(ctx context.Context, n int, every time.Duration, f func(ctx context.Context, i int) error) error {
	g, gctx := newGroup(ctx)
	t0 := time.Now()
	for i := range n {
		if sleep(gctx, time.Until(t0.Add(time.Duration(i)*every))) != nil {
			break
		}
		g.run(func() error { return f(gctx, i) })
	}
	if err := g.wait(); err != nil {
		return err
	}
	return ctx.Err()
}
