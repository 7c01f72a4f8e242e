package jobapi_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// TestRefusedEndIsLogged: when a job whose model has returned cannot be
// ended because the store ended it otherwise meanwhile (a replica's reaper,
// a restart), the server says so in its log, with what the job ended as:
// the model's result is lost, and an operator must be able to see why.
// Regression: such an end was dropped in silence.
func TestRefusedEndIsLogged(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	mem := newMemory(t, clock, 8)
	g := newGate()
	var log logBuffer
	h := newHarnessOn(t, mem, jobapi.Options{Model: g, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}, nil)
	id := h.submit("t", nil)
	<-g.started
	_, err := mem.Fail(context.Background(), id, errors.New("worker lost"))
	require.NoError(t, err, "the store ends the job under its runner")
	g.release <- struct{}{}
	until(t, "the refused end logged", func() bool { return strings.Contains(log.String(), "job end refused") })
	line := log.String()[strings.Index(log.String(), "job end refused"):]
	line = line[:strings.IndexByte(line, '\n')]
	require.Contains(t, line, "job_id="+id)
	require.Contains(t, line, "state=DONE")
	require.Contains(t, line, "ended_as=FAILED")
	require.Contains(t, line, `"worker lost"`)
}
