package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestWaitAfterListenerGoesSilent: a listener connection that goes silent
// (half-open TCP: the peer neither answers nor closes) is noticed by the
// listener's ping and replaced, and a Wait whose end was notified on the
// silent connection sees it after the reconnect. Regression: the listener
// waited for a notification with no bound, so it never noticed, and the
// Wait hung (until TCP keepalive gave up, minutes to hours later).
func TestWaitAfterListenerGoesSilent(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	proxy, proxied := startProxy(t, dsn)
	reconnects := make(chan struct{}, 1)
	a, err := postgres.OpenWithReconnectHook(ctx, proxied, ledger.Config{MaxQueue: 8},
		// The lease bounds the listener's idle wait and ping (a third each):
		// long enough that a loaded machine's slow ping is no silence.
		postgres.Options{Replica: "a", Lease: 3 * time.Second}, func() {
			select {
			case reconnects <- struct{}{}:
			default:
			}
		})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, a.CheckInvariants())
		require.NoError(t, a.Close())
	})
	b, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 8}, postgres.Options{Replica: "b"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })

	for round := range 2 {
		id, _, err := a.Submit(ctx, ledger.Submission{TaskID: "task"}, []byte("req"))
		require.NoError(t, err)
		got := waitAsync(a, id)
		requireBlocked(t, a, got)
		select { // a reconnect before the silence is not the one awaited
		case <-reconnects:
		default:
		}
		// A Wait may have seen the last round's end by polling before the
		// listener was back: silence it once it is.
		require.Eventually(t, func() bool { return proxy.silenceListeners() == 1 }, 10*time.Second, 5*time.Millisecond,
			"round %d: a's one listener", round)
		_, err = b.Finish(ctx, id, []byte("res"))
		require.NoError(t, err)
		select {
		case <-reconnects:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the listener never noticed its connection went silent", round)
		}
		r := receive(t, got)
		require.NoError(t, r.err)
		require.Equal(t, ledgertype.Done, r.snap.State, "round %d", round)
	}
}
