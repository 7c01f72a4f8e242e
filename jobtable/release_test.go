package jobtable_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// image is a request with a large payload, as the HTTP layer's requests
// carry a decoded image.
type image struct{ pixels []byte }

type imageTable = jobtable.Table[image, string]

// submitImage submits a job carrying a fresh 6 MB image and returns the
// job's id and a weak pointer to the image's pixels. Nothing else refers to
// the pixels: once the table drops the request they can be collected.
//
//go:noinline
func submitImage(t *testing.T, tab *imageTable) (string, weak.Pointer[byte]) {
	t.Helper()
	pixels := make([]byte, 6<<20)
	id, err := tab.Submit("img", image{pixels: pixels})
	require.NoError(t, err)
	return id, weak.Make(&pixels[0])
}

// TestCanceledPendingJobFreesRequest pins the leak of the requests of jobs
// that ended while PENDING: the terminal transition left the request in the
// job, and nobody could take it any more, so each cancelled or expired job
// held its image until retention evicted it (120 submit-and-cancel cycles
// of 6 MB images kept 940 MB on the heap after a GC). The terminal
// transition now drops the request; the job stays retained without it.
func TestCanceledPendingJobFreesRequest(t *testing.T) {
	ends := map[string]func(*imageTable, string) (jobtable.Snapshot, error){
		"Fail":    func(tab *imageTable, id string) (jobtable.Snapshot, error) { return tab.Fail(id, errBoom) },
		"Timeout": func(tab *imageTable, id string) (jobtable.Snapshot, error) { return tab.Timeout(id, errBoom) },
		"Finish":  func(tab *imageTable, id string) (jobtable.Snapshot, error) { return tab.Finish(id, "r") },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			clock := fakeclock.New()
			tab, err := jobtable.New[image, string](jobtable.Config{
				MaxQueue: 1, JobTTL: -1, MaxCompleted: -1, Now: clock.Now, NewID: fakeclock.Seq("j"),
			})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, tab.CheckInvariants()) })

			id, pixels := submitImage(t, tab)
			runtime.GC()
			require.NotNil(t, pixels.Value(), "a PENDING job holds its request")

			_, err = end(tab, id)
			require.NoError(t, err)
			runtime.GC()
			require.Nil(t, pixels.Value(), "the ended job still holds its request")

			snap, err := tab.Snapshot(id)
			require.NoError(t, err, "the job is still retained")
			require.True(t, snap.State.Terminal())
			require.Equal(t, 1, tab.Stats().Retained)
			_, err = tab.TakeRequest(id)
			require.ErrorIs(t, err, jobtable.ErrTerminal)
		})
	}
}

// TestTakeRequestOnTerminalJob: once a job has ended its request is gone,
// taken or not, and TakeRequest says the job is terminal.
func TestTakeRequestOnTerminalJob(t *testing.T) {
	for _, s := range []jobtable.State{ledgertype.Done, ledgertype.Failed, ledgertype.TimedOut} {
		for _, takenFirst := range []bool{false, true} {
			tab, _ := newTable(t, jobtable.Config{MaxQueue: 1})
			id := mustSubmit(t, tab, "a")
			if takenFirst {
				_, err := tab.TakeRequest(id)
				require.NoError(t, err)
			}
			switch s {
			case ledgertype.Done:
				require.NoError(t, errOf(tab.Finish(id, "r")))
			case ledgertype.Failed:
				require.NoError(t, errOf(tab.Fail(id, errBoom)))
			default:
				require.NoError(t, errOf(tab.Timeout(id, errBoom)))
			}
			r, err := tab.TakeRequest(id)
			require.ErrorIs(t, err, jobtable.ErrTerminal, "%s, taken first %t", s, takenFirst)
			require.Equal(t, req{}, r)
		}
	}
}
