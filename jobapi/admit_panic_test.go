package jobapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// panickyClock is a fake clock whose AfterFunc panics while armed, as a
// Clock of the caller's with a bug would.
type panickyClock struct {
	*fakeClock
	armed atomic.Bool
}

func (c *panickyClock) AfterFunc(d time.Duration, f func()) func() bool {
	if c.armed.Load() {
		panic("clock broken")
	}
	return c.fakeClock.AfterFunc(d, f)
}

// submitWhileArmed posts a job to srv with clock's AfterFunc armed to
// panic, and returns what the request panicked with (nil if nothing).
func submitWhileArmed(srv *jobapi.Server, clock *panickyClock) (panicked any) {
	clock.armed.Store(true)
	defer clock.armed.Store(false)
	defer func() { panicked = recover() }()
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(`{"task_id":"orphan"}`))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(httptest.NewRecorder(), req)
	return nil
}

// TestAdmitPanicEndsCommittedJob pins a defect: a Clock.AfterFunc that
// panicked after the Submit had committed (as the job's deadline is armed)
// left the job PENDING with no runner and no deadline, holding its slot of
// the queue for ever, and its deadline timer counted. The job now ends
// FAILED "job store failure" before the panic goes on to net/http, and no
// timer stays counted.
func TestAdmitPanicEndsCommittedJob(t *testing.T) {
	t.Parallel()
	clock := &panickyClock{fakeClock: newFakeClock()}
	mem := newMemory(t, clock.fakeClock, 8)
	g := newGate()
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	srv, err := jobapi.New(mem, cfg, jobapi.Options{Model: g, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)

	require.Equal(t, "clock broken", submitWhileArmed(srv, clock), "the panic still reaches the caller")

	stats := mem.Stats()
	require.Equal(t, 1, stats.Jobs, "the Submit committed")
	require.Zero(t, stats.Depth, "the job admitted is not left live with no runner")
	page, err := mem.List(context.Background(), ledger.ListQuery{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, "FAILED", page.Jobs[0].State.String())
	require.EqualError(t, page.Jobs[0].Err, "job store failure")

	checkDrained(t, srv, clock.fakeClock)
	require.Empty(t, g.started, "its model never ran")
}

// panickyFail is a memory store whose Fail panics, as a Ledger of the
// caller's with a bug would.
type panickyFail struct{ store }

func (panickyFail) Fail(context.Context, string, error) (ledger.Snapshot, error) {
	panic("store broken")
}

// TestAdmitPanicInOrphanEndReleasesWork pins a defect: admit ended an
// orphaned job (its Submit committed, then arming its deadline panicked)
// and released its unit of work in one deferred function, the end first,
// so that an end that panicked too skipped the release, and Shutdown
// waited for the unit of work for ever. The release now runs last, in a
// defer of its own, whatever the end does.
func TestAdmitPanicInOrphanEndReleasesWork(t *testing.T) {
	t.Parallel()
	clock := &panickyClock{fakeClock: newFakeClock()}
	st := panickyFail{store: newMemory(t, clock.fakeClock, 8)}
	cfg := jobapi.DefaultConfig()
	cfg.Workers = 1
	srv, err := jobapi.New(st, cfg, jobapi.Options{Model: newGate(), Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	require.Equal(t, "store broken", submitWhileArmed(srv, clock), "the last panic reaches the caller")

	grace, endGrace := context.WithCancel(context.Background())
	endGrace()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(grace) }()
	received(t, shut, "Shutdown returned: no unit of work left counted")
}
