package jobtable

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJobFoundWholeDuringSubmit: a reader that finds a job by its id while
// its Submit is still running sees the whole job, its tenant included: the
// job is filed, and so visible to lock-free lookups, only once it is.
func TestJobFoundWholeDuringSubmit(t *testing.T) {
	for round := range 100 {
		id := "job-" + strconv.Itoa(round)
		tb, err := New[string, string](Config{MaxQueue: 1, NewID: func() string { return id }})
		require.NoError(t, err)
		found := make(chan Snapshot, 1)
		ready := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			close(ready)
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
				if s, err := tb.Start(id); err == nil {
					found <- s
					return
				}
			}
			close(found)
		})
		<-ready
		_, _, err = tb.SubmitWith(Submission{TaskID: "t", Tenant: "acme"}, "req")
		require.NoError(t, err)
		wg.Wait()
		s, ok := <-found
		require.True(t, ok, "the reader never found the job")
		require.Equal(t, "acme", s.Tenant)
	}
}
