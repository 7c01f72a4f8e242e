package jobapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// endEveryWay ends work on h, whose model is g and whose deadline is one
// second, in every way it can end: a job past its deadline (first, so that
// moving the clock fires no other job's timer), then jobs DONE and FAILED,
// a pending and a running job cancelled, and /infer answered 200 and 422.
// Every job but the first ends before its deadline.
func endEveryWay(t *testing.T, h *harness, g *gateModel) {
	t.Helper()
	late := h.submit("late", nil)
	<-g.started
	require.Equal(t, 1, h.clock.Pending(), "the only deadline armed")
	h.clock.Advance(time.Second)
	require.Equal(t, client.TimedOut, h.waitDone(late).State)
	require.ErrorIs(t, <-g.ended, jobapi.ErrDeadline)

	done := h.submit("done", nil)
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(done).State)

	failed := h.submit("failed", map[string]any{"fail": "boom"})
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Failed, h.waitDone(failed).State)

	running := h.submit("running", nil)
	<-g.started
	pending := h.submit("pending", nil) // the only worker is taken
	for _, id := range []string{pending, running} {
		_, err := h.api.Cancel(t.Context(), id)
		require.NoError(t, err)
	}
	require.ErrorIs(t, <-g.ended, jobapi.ErrCanceled)

	for _, fail := range []string{"", "boom"} {
		got := make(chan error, 1)
		go func() {
			_, err := h.api.Infer(context.Background(), client.Request{Params: params(t, map[string]any{"fail": fail})})
			got <- err
		}()
		<-g.started
		g.release <- struct{}{}
		if err := <-got; fail == "" {
			require.NoError(t, err)
		} else {
			requireAPIError(t, err, http.StatusUnprocessableEntity, "model failed")
		}
	}
}

// TestFlightLeftAfterRunnerReturns pins a runner that returns without
// deleting its entry in the server's flights: the map grew by one job per
// job, each holding the job's cancel and through it its context, forever,
// and every test passed. However the job ends, once the server is drained
// FlightsInv finds no flight left.
func TestFlightLeftAfterRunnerReturns(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
	endEveryWay(t, h, g)
	require.NoError(t, h.srv.CheckInvariants(), "before shutdown")
	requireShutdownReturns(t, h.srv)
	require.NoError(t, h.srv.CheckInvariants(), "drained")
}

// TestDeadlineTimerLeftAfterJobEnds pins a deadline timer that is never
// stopped when its job, or its /infer, ends before the deadline: it stayed
// armed until the deadline, one per request, and fired into work long
// over. However the work ends, once the server is drained the clock holds
// no timer and TimersInv counts none.
func TestDeadlineTimerLeftAfterJobEnds(t *testing.T) {
	t.Parallel()
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncTimeout = time.Second })
	endEveryWay(t, h, g)
	requireShutdownReturns(t, h.srv)
	require.Zero(t, h.clock.Pending(), "deadline timers still armed")
	require.NoError(t, h.srv.CheckInvariants())
}

// lateClock is a fakeClock whose timers all fire as they are stopped: stop
// reports false, as time.Timer.Stop does for a timer that has expired, and
// the callback runs only when the test calls fireLate, as the goroutine
// time.AfterFunc starts may run after Stop has returned.
type lateClock struct {
	*fakeClock
	mu   sync.Mutex
	late []func()
}

func (c *lateClock) AfterFunc(d time.Duration, f func()) func() bool {
	stop := c.fakeClock.AfterFunc(d, f)
	return func() bool {
		if stop() {
			c.mu.Lock()
			c.late = append(c.late, f)
			c.mu.Unlock()
		}
		return false
	}
}

func (c *lateClock) fireLate() int {
	c.mu.Lock()
	late := c.late
	c.late = nil
	c.mu.Unlock()
	for _, f := range late {
		f()
	}
	return len(late)
}

// TestFiredDeadlineCountedAfterRelease pins the count of a deadline timer
// that fired as its work ended, whose callback had not run when the work
// released it: counted only by the callback, it was still armed once the
// server was drained, and counted by both, it went below zero. Release and
// the callback retire it once between them, whichever comes first.
func TestFiredDeadlineCountedAfterRelease(t *testing.T) {
	t.Parallel()
	g := newGate()
	clock := &lateClock{fakeClock: newFakeClock()}
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	srv, err := jobapi.New(memoryStore(t, cfg, clock), cfg, jobapi.Options{Model: g, Clock: clock, Logger: slog.New(slog.DiscardHandler), LedgerJobTTL: cfg.AsyncJobTTL})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	h := &harness{t: t, srv: srv, ts: ts, api: newClient(t, ts), clock: clock.fakeClock}

	id := h.submit("job", nil)
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, client.Done, h.waitDone(id).State)
	got := make(chan error, 1)
	go func() {
		_, err := h.api.Infer(context.Background(), client.Request{})
		got <- err
	}()
	<-g.started
	g.release <- struct{}{}
	require.NoError(t, <-got)

	requireShutdownReturns(t, srv)
	require.NoError(t, srv.CheckInvariants(), "released, callbacks not run")
	require.Equal(t, 2, clock.fireLate())
	require.NoError(t, srv.CheckInvariants(), "callbacks run after release")
}
