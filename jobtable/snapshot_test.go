package jobtable_test

import (
	"testing"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/jobtable"
)

// TestSnapshotNeverSeesHalfATransition races a poller against the terminal
// transition on many fresh jobs. The poller is already polling when the
// transition starts, and polls until it sees the end. Every view must be
// whole: a terminal state with its completion time and error. A snapshot
// that reads the payload without the job's lock (D1) pairs a terminal
// state with the payload of before, and the race detector reports the
// unlocked read even in a round whose views happen to look whole.
func TestSnapshotNeverSeesHalfATransition(t *testing.T) {
	const rounds = 300
	tab, _ := newTable(t, jobtable.Config{MaxQueue: 1, MaxCompleted: 1})
	for round := range rounds {
		id := mustSubmit(t, tab, "a")
		polling := make(chan struct{})
		bad := make(chan error, 1)
		go func() {
			defer close(bad)
			for i := 0; ; i++ {
				snap, err := tab.Snapshot(id)
				if err == nil {
					err = stress.Possible(snap)
				}
				if err != nil {
					bad <- err
					return
				}
				if i == 0 {
					close(polling)
				}
				if snap.State.Terminal() {
					return
				}
			}
		}()
		<-polling
		if _, err := tab.Timeout(id, errBoom); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := <-bad; err != nil {
			t.Fatalf("round %d: poller saw half a transition: %v", round, err)
		}
	}
}
