package jobapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/model"
)

// expiresAt is the snapshot's expires_at, failing the test when absent.
func expiresAt(t *testing.T, s client.Snapshot) time.Time {
	t.Helper()
	require.False(t, s.ExpiresAt.IsZero(), "expires_at in %+v", s)
	return s.ExpiresAt
}

// completedAt is the snapshot's completed_at, failing the test when absent.
func completedAt(t *testing.T, s client.Snapshot) time.Time {
	t.Helper()
	require.False(t, s.CompletedAt.IsZero(), "completed_at in %+v", s)
	return s.CompletedAt
}

// TestExpiresAtInTerminalSnapshots: every terminal snapshot (GET, wait,
// cancel) carries expires_at = completed_at + async_job_ttl; a live job's
// does not, and neither does the result body, which carries no times.
func TestExpiresAtInTerminalSnapshots(t *testing.T) {
	t.Parallel()
	const ttl = 90 * time.Second
	g := newGate()
	h := newHarness(t, g, func(c *jobapi.Config) { c.AsyncJobTTL = ttl })

	done := h.submit("done", nil)
	<-g.started
	running := h.snapshot(done)
	require.Equal(t, client.Running, running.State)
	require.Zero(t, running.ExpiresAt, "not terminal")
	pending := h.submit("pending", nil)
	require.Zero(t, h.snapshot(pending).ExpiresAt, "not terminal")

	h.clock.Advance(3 * time.Second)
	g.release <- struct{}{}
	waited := h.waitDone(done)
	require.Equal(t, client.Done, waited.State)
	require.Equal(t, completedAt(t, waited).Add(ttl), expiresAt(t, waited), "wait")
	got := h.snapshot(done)
	require.Equal(t, completedAt(t, got).Add(ttl), expiresAt(t, got), "GET")
	require.Equal(t, h.clock.Now().Add(ttl), expiresAt(t, got), "completed_at is the clock's time")
	require.NotContains(t, h.get("/jobs/"+done+"/result").Body, "expires_at", "the result body carries no times")

	<-g.started // pending runs now
	h.clock.Advance(time.Second)
	canceled, err := h.api.Cancel(t.Context(), pending)
	require.NoError(t, err)
	require.Equal(t, h.clock.Now().Add(ttl), expiresAt(t, canceled), "cancel")
	<-g.ended
}

// TestExpiresAtIsWhenTTLEvicts: a job is kept up to just before its
// expires_at, and evicted by the first submit at or after it.
func TestExpiresAtIsWhenTTLEvicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *jobapi.Config) {
		c.Model = "echo"
		c.AsyncJobTTL = time.Minute
	})
	id := h.submit("1", nil)
	at := expiresAt(t, h.waitDone(id))

	h.clock.Advance(at.Sub(h.clock.Now()) - time.Millisecond)
	h.waitDone(h.submit("2", nil))
	_, err := h.api.Snapshot(t.Context(), id)
	require.NoError(t, err, "kept before expires_at")

	h.clock.Advance(time.Millisecond) // now == expires_at
	h.waitDone(h.submit("3", nil))
	_, err = h.api.Snapshot(t.Context(), id)
	requireAPIError(t, err, http.StatusNotFound, "no such job")
	require.ErrorIs(t, err, client.ErrNotFound)
}

// TestExpiresAtOfAGivenLedger: the server cannot read the ledger's TTL;
// Options.LedgerJobTTL gives it, and without it (or with a negative one,
// no eviction by time) snapshots carry no expires_at.
func TestExpiresAtOfAGivenLedger(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ttl  time.Duration
		want bool
	}{
		{"given", 5 * time.Minute, true},
		{"unknown", 0, false},
		{"disabled", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newFakeClock()
			mem, err := ledger.NewMemory[jobapi.Request, json.RawMessage](ledger.Config{MaxQueue: 4, JobTTL: c.ttl, Now: clock.Now})
			require.NoError(t, err)
			t.Cleanup(func() { _ = mem.Close() })
			h := newHarnessOn(t, mem, jobapi.Options{Model: model.Echo{}, Clock: clock, LedgerJobTTL: c.ttl}, nil)
			r := h.waitDone(h.submit("t", nil))
			if !c.want {
				require.Zero(t, r.ExpiresAt)
				return
			}
			require.Equal(t, completedAt(t, r).Add(c.ttl), expiresAt(t, r))
		})
	}
}
