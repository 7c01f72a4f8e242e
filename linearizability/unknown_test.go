package linearizability_test

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/linearizability"
)

// lostReadsHistory is one job's history as a kill leaves it: submitted,
// then lost reads of unknown outcome, pending forever, interleaved with
// reads that returned, ending in DONE and its result. last is the final
// snapshot's view (DONE for a legal history).
func lostReadsHistory(lost int, last linearizability.State) []porcupine.Operation {
	const id, task, req = "j1", "t1", `{"n":1}`
	h := []porcupine.Operation{{
		ClientId: 0, Call: 0, Return: 1,
		Input:  linearizability.Input{Kind: linearizability.Submit, TaskID: task, Value: req},
		Output: linearizability.Output{Outcome: linearizability.OK, ID: id},
	}}
	t := int64(2)
	kinds := []linearizability.Kind{linearizability.Wait, linearizability.Snapshot, linearizability.Result, linearizability.Cancel}
	for i := range lost {
		h = append(h, porcupine.Operation{
			ClientId: 1 + i, Call: t, Return: linearizability.Pending,
			Input:  linearizability.Input{Kind: kinds[i%len(kinds)], ID: id},
			Output: linearizability.Output{Outcome: linearizability.Unknown},
		})
		t++
	}
	for _, st := range [][2]linearizability.State{{linearizability.StateRunning, linearizability.StatePending}, {linearizability.StateDone, linearizability.StateRunning}} {
		// Two reads in flight together, the first called seeing the later
		// state: a search that places them in call order must go back.
		h = append(h, porcupine.Operation{
			ClientId: 1 + lost, Call: t, Return: t + 3,
			Input:  linearizability.Input{Kind: linearizability.Snapshot, ID: id},
			Output: linearizability.Output{Outcome: linearizability.OK, State: st[0], TaskID: task, Started: true, Completed: st[0].Terminal()},
		}, porcupine.Operation{
			ClientId: 2 + lost, Call: t + 1, Return: t + 2,
			Input:  linearizability.Input{Kind: linearizability.Snapshot, ID: id},
			Output: linearizability.Output{Outcome: linearizability.OK, State: st[1], TaskID: task, Started: st[1] != linearizability.StatePending},
		})
		t += 4
	}
	return append(h,
		porcupine.Operation{
			ClientId: 2 + lost, Call: t, Return: t + 1,
			Input:  linearizability.Input{Kind: linearizability.Result, ID: id},
			Output: linearizability.Output{Outcome: linearizability.OK, Value: req, State: linearizability.StateDone, TaskID: task},
		},
		porcupine.Operation{
			ClientId: 2 + lost, Call: t + 2, Return: t + 3,
			Input:  linearizability.Input{Kind: linearizability.Snapshot, ID: id},
			Output: linearizability.Output{Outcome: linearizability.OK, State: last, TaskID: task, Started: last != linearizability.StatePending, Completed: last.Terminal()},
		})
}

// TestUnknownReadsLeftOut: reads lost in a kill constrain nothing, and the
// HTTP check leaves them out of the job model, so that forty of them on
// one job cost nothing, where porcupine alone would search every subset of
// them before it could call a history illegal (2^40). The verdicts are
// those of the history without them: legal stays legal, and a job seen
// going back from DONE to PENDING is still a violation, found at once.
func TestUnknownReadsLeftOut(t *testing.T) {
	const lost = 40
	cfg := linearizability.CheckConfig{MaxQueue: 1, Retained: true, Timeout: 30 * time.Second, NoVisualize: true}

	rep := linearizability.CheckHTTP(lostReadsHistory(lost, linearizability.StateDone), cfg)
	require.Equal(t, linearizability.Linearizable, rep.Verdict, rep.Message)
	require.Equal(t, lost, rep.UnknownLeftOut)
	require.Equal(t, 7, rep.LargestPartition, "the job check sees the submit and the six reads that returned")

	rep = linearizability.CheckHTTP(lostReadsHistory(lost, linearizability.StatePending), cfg)
	require.Equal(t, linearizability.Violation, rep.Verdict, rep.Message)
	require.Equal(t, "job", rep.Model)
	require.Equal(t, "j1", rep.Partition)
}
