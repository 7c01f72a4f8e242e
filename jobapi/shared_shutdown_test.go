package jobapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/jobapi"
)

// TestSharedShutdownClaimsNothing pins a defect: a replica whose shutdown
// had begun claimed on through its grace period, so that a job claimed
// shortly before the grace ended, or during the Claim itself, ended FAILED
// "server shutting down" without ever running, where another replica
// could have run it. Once Shutdown begins the claimer claims nothing: the
// job its one worker frees up for stays PENDING, Shutdown returns as soon
// as the running job has ended, and another replica runs the job.
func TestSharedShutdownClaimsNothing(t *testing.T) {
	t.Parallel()
	hb := newHub(t, newFakeClock(), 8)
	gA := newGate()
	a := newHarnessOn(t, hb.view(), jobapi.Options{Model: gA}, nil)
	running := a.submit("running", nil)
	require.Equal(t, "running", <-gA.started)
	pending := a.submit("pending", nil)

	grace, endGrace := context.WithCancel(context.Background())
	defer endGrace()
	shut := make(chan error, 1)
	go func() { shut <- a.srv.Shutdown(grace) }()
	until(t, "shutdown began", func() bool { return a.get("/healthz").Status == http.StatusServiceUnavailable })
	gA.release <- struct{}{} // the one worker comes free in the grace period

	select {
	case err := <-shut:
		require.NoError(t, err, "every job A started ended within the grace period")
	case id := <-gA.started:
		endGrace()
		<-shut
		t.Fatalf("A claimed job %q after its shutdown began; it ended %v", id, a.snapshot(pending).State)
	}
	require.Equal(t, client.Done, a.snapshot(running).State)
	require.Equal(t, client.Pending, a.snapshot(pending).State, "left for another replica")
	require.NoError(t, a.srv.CheckInvariants())

	gB := newGate()
	b := newHarnessOn(t, hb.view(), jobapi.Options{Model: gB}, nil)
	require.Equal(t, "pending", received(t, gB.started, "B runs the job A left"))
	gB.release <- struct{}{}
	require.Equal(t, client.Done, b.waitBounded(pending).State)
}
