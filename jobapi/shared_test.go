package jobapi_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// The tests of shared mode run two servers, two replicas, on one hub (a
// memory store shared through views with a Shared side), each server on a
// fake clock of its own and the hub on a third, the database's.

// replicaFunc starts a replica named name of one shared store, running
// model g, with the harness's config changed by mutate (may be nil).
type replicaFunc func(t *testing.T, name string, g *gateModel, mutate func(*jobapi.Config)) *harness

// hubReplicas starts replicas on one hub.
func hubReplicas(t *testing.T) replicaFunc {
	hb := newHub(t, newFakeClock(), 8)
	return func(t *testing.T, _ string, g *gateModel, mutate func(*jobapi.Config)) *harness {
		return newHarnessOn(t, hb.view(), jobapi.Options{Model: g}, mutate)
	}
}

// pgReplicas starts replicas on one new PostgreSQL database, each server
// on a store of its own opened on the database's URL under its replica
// name, as cmd/jobserver does. Each server's fake clock is the store's
// clock; the tests that use it never move them, so all read the same
// time.
func pgReplicas(t *testing.T) replicaFunc {
	dsn := pgtest.NewDatabase(t)
	return func(t *testing.T, name string, g *gateModel, mutate func(*jobapi.Config)) *harness {
		return newHarnessStore(t, dsn, name, jobapi.Options{Model: g}, mutate)
	}
}

// TestSharedWorkMovesToIdleReplica: a job admitted by a replica whose
// workers are all busy runs on the other; that replica reads and waits on
// the first one's jobs; a cancel on the admitting replica stops the model
// call on the one running the job. On a hub, and on PostgreSQL.
func TestSharedWorkMovesToIdleReplica(t *testing.T) {
	t.Parallel()
	t.Run("hub", func(t *testing.T) { testWorkMovesToIdleReplica(t, hubReplicas(t)) })
	t.Run("postgres", func(t *testing.T) { testWorkMovesToIdleReplica(t, pgReplicas(t)) })
}

func testWorkMovesToIdleReplica(t *testing.T, replica replicaFunc) {
	gA, gB := newGate(), newGate()
	a := replica(t, "a", gA, nil)
	first := a.submit("first", nil)
	require.Equal(t, "first", <-gA.started, "the only replica runs it")
	b := replica(t, "b", gB, nil)
	second := a.submit("second", nil)
	require.Equal(t, "second", received(t, gB.started, "B runs A's job"), "A's one worker is busy: B runs A's job")

	require.Equal(t, client.Running, b.snapshot(first).State)
	gA.release <- struct{}{}
	require.Equal(t, client.Done, b.waitBounded(first).State, "B waits on A's job")
	_, err := b.api.Result(t.Context(), first)
	require.NoError(t, err, "B reads A's result")

	_, err = a.api.Cancel(t.Context(), second)
	require.NoError(t, err)
	require.ErrorIs(t, received(t, gB.ended, "B's model call cancelled"), jobapi.ErrJobEnded, "the cancel on A stops B's model call")
	s := b.waitBounded(second)
	require.Equal(t, client.Failed, s.State)
	require.Equal(t, "canceled", s.Error)
}

// TestSharedAdmissionDeadline: a job that no replica could start before
// its deadline ends TIMEOUT, PENDING, by the timer of the replica that
// admitted it. The models ignore their contexts, so that the workers stay
// busy past the deadlines.
func TestSharedAdmissionDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Second
	hb := newHub(t, newFakeClock(), 8)
	gA, gB := newGate(), newGate()
	gA.ignoreCtx, gB.ignoreCtx = true, true
	short := func(c *jobapi.Config) { c.AsyncTimeout = timeout }
	a := newHarnessOn(t, hb.view(), jobapi.Options{Model: gA}, short)
	busyA := a.submit("busy-a", nil)
	require.Equal(t, "busy-a", <-gA.started)
	b := newHarnessOn(t, hb.view(), jobapi.Options{Model: gB}, short)
	busyB := b.submit("busy-b", nil)
	require.Equal(t, "busy-b", <-gB.started)
	waiting := a.submit("waiting", nil)
	require.Equal(t, client.Pending, b.snapshot(waiting).State)

	b.clock.Advance(timeout)
	a.clock.Advance(timeout)
	r := b.waitBounded(waiting)
	require.Equal(t, client.TimedOut, r.State, "%+v", r)
	require.Zero(t, r.StartedAt, "it never started")
	require.Equal(t, client.TimedOut, a.waitBounded(busyB).State)
	require.Equal(t, client.TimedOut, b.waitBounded(busyA).State)
	gA.release <- struct{}{}
	gB.release <- struct{}{}
	<-gA.ended
	<-gB.ended
	require.Empty(t, gA.started, "nobody ran it")
	require.Empty(t, gB.started, "nobody ran it")
}

// TestSharedAdmissionTimerFiringAtOnce: an admission deadline whose timer
// fires before AfterFunc has returned (a real timer may) still ends its
// job TIMEOUT, and leaves no timer armed.
func TestSharedAdmissionTimerFiringAtOnce(t *testing.T) {
	t.Parallel()
	hb := newHub(t, newFakeClock(), 8)
	g := newGate()
	a := newHarnessOn(t, hb.view(), jobapi.Options{Model: g}, nil)
	busy := a.submit("busy", nil)
	require.Equal(t, "busy", <-g.started)

	// The one worker is busy, so nothing but the admission deadline can
	// end the late job; its timer fires inside the POST.
	a.clock.fireNextTimer()
	late := a.submit("late", nil)
	r := a.snapshot(late)
	require.Equal(t, client.TimedOut, r.State, "%+v", r)
	require.Zero(t, r.StartedAt, "it never started")
	require.NoError(t, a.srv.CheckInvariants())

	g.release <- struct{}{}
	require.Equal(t, client.Done, a.waitBounded(busy).State)
	require.Empty(t, g.started, "nobody ran the late job")
}

// TestSharedClaimPastDeadline: a job PENDING past its deadline, admitted
// by a replica gone since, ends TIMEOUT at once when another claims it,
// without running: its deadline counts from its admission on the hub's
// clock.
func TestSharedClaimPastDeadline(t *testing.T) {
	t.Parallel()
	dbClock := newFakeClock()
	hb := newHub(t, dbClock, 8)
	late := submitTo(t, hb.view(), "late")
	dbClock.Advance(jobapi.DefaultAsyncTimeout + time.Second)
	g := newGate()
	h := newHarnessOn(t, hb.view(), jobapi.Options{Model: g}, nil)
	r := h.waitBounded(late.ID)
	require.Equal(t, client.TimedOut, r.State, "%+v", r)
	require.Empty(t, g.started, "its model never ran")
}

// TestSharedShutdownLeavesPending: a replica shutting down leaves the jobs
// it admitted and nobody started PENDING, with no admission deadline left
// armed; another replica runs them. On a hub, and on PostgreSQL.
func TestSharedShutdownLeavesPending(t *testing.T) {
	t.Parallel()
	t.Run("hub", func(t *testing.T) { testShutdownLeavesPending(t, hubReplicas(t)) })
	t.Run("postgres", func(t *testing.T) { testShutdownLeavesPending(t, pgReplicas(t)) })
}

func testShutdownLeavesPending(t *testing.T, replica replicaFunc) {
	gA := newGate()
	a := replica(t, "a", gA, nil)
	running := a.submit("running", nil)
	require.Equal(t, "running", <-gA.started)
	pending := a.submit("pending", nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace
	_ = a.srv.Shutdown(ctx)
	require.ErrorIs(t, <-gA.ended, jobapi.ErrShuttingDown)
	require.NoError(t, a.srv.CheckInvariants(), "drained, no admission deadline armed")
	require.Zero(t, a.clock.Pending(), "every timer of A stopped")
	require.Equal(t, client.Failed, a.snapshot(running).State)
	require.Equal(t, client.Pending, a.snapshot(pending).State, "left for another replica")

	gB := newGate()
	b := replica(t, "b", gB, nil)
	require.Equal(t, "pending", received(t, gB.started, "B runs the job A left"))
	gB.release <- struct{}{}
	require.Equal(t, client.Done, b.waitBounded(pending).State)
}

// received returns the next value of ch. Each value these tests wait for
// follows a step they took within milliseconds; the 10 s only stop a
// broken build from hanging the test, and assert nothing about time.
func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	giveUp := time.NewTimer(10 * time.Second)
	defer giveUp.Stop()
	select {
	case v := <-ch:
		return v
	case <-giveUp.C:
		t.Fatalf("never happened: %s", what)
		var zero T
		return zero
	}
}

// undecodable is a replica's view whose Claim claims a job but cannot read
// its request, as a store of bytes answers when the stored request no
// longer decodes.
type undecodable struct{ *view }

func (u undecodable) Claim(ctx context.Context) (ledger.Snapshot, jobapi.Request, error) {
	snap, _, err := u.view.Claim(ctx)
	if err != nil {
		return snap, jobapi.Request{}, err
	}
	return snap, jobapi.Request{}, errors.New("decoding the request: unexpected end of JSON input")
}

// TestSharedClaimUndecodable: a job claimed whose request cannot be read
// ends FAILED "job store failure" at once, instead of staying RUNNING on
// the replica that claimed it; its model never runs.
func TestSharedClaimUndecodable(t *testing.T) {
	t.Parallel()
	hb := newHub(t, newFakeClock(), 8)
	g := newGate()
	h := newHarnessOn(t, undecodable{hb.view()}, jobapi.Options{Model: g}, nil)
	id := h.submit("broken", nil)
	r := h.waitBounded(id)
	require.Equal(t, client.Failed, r.State, "%+v", r)
	require.Equal(t, "job store failure", r.Error)
	require.Empty(t, g.started, "its model never ran")
}

// cancelledAtClaim is a replica's view on which every job it claims is
// cancelled by another replica right after the claim's commit, before
// Claim returns: the end is heard before the claimer has registered the
// job's flight.
type cancelledAtClaim struct {
	*view
	other *view
}

func (c cancelledAtClaim) Claim(ctx context.Context) (ledger.Snapshot, jobapi.Request, error) {
	snap, req, err := c.view.Claim(ctx)
	if err == nil {
		if _, ferr := c.other.Fail(ctx, snap.ID, errors.New("canceled")); ferr != nil {
			return snap, req, ferr
		}
	}
	return snap, req, err
}

// TestSharedEndHeardBeforeFlight: the end of a job heard between its
// Claim and the registration of its flight still stops it here: its model
// never runs.
func TestSharedEndHeardBeforeFlight(t *testing.T) {
	t.Parallel()
	hb := newHub(t, newFakeClock(), 8)
	var m countingModel
	h := newHarnessOn(t, cancelledAtClaim{view: hb.view(), other: hb.view()}, jobapi.Options{Model: &m}, nil)
	id := h.submit("cancelled", nil)
	r := h.waitBounded(id)
	require.Equal(t, client.Failed, r.State, "%+v", r)
	require.Equal(t, "canceled", r.Error)
	require.NoError(t, h.srv.Shutdown(context.Background()), "drained: the claimer and every runner returned")
	require.Zero(t, m.runs.Load(), "its model never ran")
}

// countingModel counts its runs, each of which returns at once.
type countingModel struct{ runs atomic.Int64 }

func (m *countingModel) Run(context.Context, jobapi.Request) (any, error) {
	m.runs.Add(1)
	return map[string]string{}, nil
}
