package postgres_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestWaitWhileListenerRefused: while the listener cannot reconnect (the
// server refuses its new connections), a Wait reads its job again every
// Lease/3, so an end committed by another Store meanwhile is returned
// within a few of those, not at the Wait's deadline; ListenerHealth says
// the listener is down, with the cause, then up once it reconnects, and
// each change is logged once, however many reconnects failed. Regression:
// the Wait slept until its context ended, and nothing told of the
// listener's state.
func TestWaitWhileListenerRefused(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	proxy, proxied := startProxy(t, dsn)
	logs := &recorder{}
	// The lease sets the poll interval (Lease/3) and the listener's own
	// checks: long enough that a loaded machine's slow ping is no failure.
	const lease = 3 * time.Second
	a, err := postgres.Open(ctx, proxied, ledger.Config{MaxQueue: 8},
		postgres.Options{Replica: "a", Lease: lease, Logger: slog.New(logs)})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, a.CheckInvariants())
		require.NoError(t, a.Close())
	})
	b := openReplica(t, dsn, "b", nil, 0)
	ok, upSince, err := a.ListenerHealth()
	require.True(t, ok)
	require.NoError(t, err)
	require.False(t, upSince.IsZero())

	id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	got := make(chan waitResult, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		snap, err := a.Wait(wctx, id)
		got <- waitResult{snap, err}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	requireBlocked(t, a, got)

	require.Equal(t, 1, proxy.refuseListeners(true), "a's one listener")
	require.Eventually(t, func() bool { ok, _, _ := a.ListenerHealth(); return !ok }, 10*time.Second, 5*time.Millisecond)
	_, err = b.Finish(ctx, id, []byte("res"))
	require.NoError(t, err)
	select {
	case r := <-got:
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.Done, r.snap.State)
	case <-time.After(10 * lease / 3):
		t.Fatal("the Wait did not see the end while its listener was refused")
	}
	ok, downSince, err := a.ListenerHealth()
	require.False(t, ok, "the listener is still refused")
	require.Error(t, err)
	require.True(t, downSince.After(upSince))
	require.Greater(t, proxy.refused(), 1, "reconnects were refused, more than once")

	proxy.refuseListeners(false)
	require.Eventually(t, func() bool { ok, _, _ := a.ListenerHealth(); return ok }, 20*time.Second, 5*time.Millisecond)
	ok, since, err := a.ListenerHealth()
	require.True(t, ok)
	require.NoError(t, err)
	require.True(t, since.After(downSince))
	require.Equal(t, []string{
		"WARN postgres: the listener lost its connection; waits poll their jobs until it reconnects",
		"INFO postgres: the listener reconnected",
	}, logs.lines(), "each change of state logged once")
}

// recorder is a slog.Handler that keeps the level and message of each
// record. mu guards records.
type recorder struct {
	mu      sync.Mutex
	records []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Level.String()+" "+rec.Message)
	return nil
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.records...)
}
