package httpstress

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/linearizability"
)

// TestDueByCountsFromAdmission: a job is due its timeout plus the grace
// after its admission, restarts or not; only the time the server was down
// before that point is added, and a down time the addition reaches is
// added too.
func TestDueByCountsFromAdmission(t *testing.T) {
	const s = int64(time.Second)
	for _, tc := range []struct {
		name string
		down []downtime
		want int64
	}{
		{"never down", nil, 13 * s},
		{"down before the admission", []downtime{{0, s}}, 13 * s},
		{"down across the admission", []downtime{{0, 2 * s}}, 14 * s},
		{"down after the admission", []downtime{{3 * s, 4 * s}, {5 * s, 7 * s}}, 16 * s},
		{"down after it was due", []downtime{{14 * s, 20 * s}}, 13 * s},
		{"down reached by an earlier down time", []downtime{{12 * s, 13 * s}, {13*s + s/2, 14*s + s/2}}, 15 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// admitted at 1 s, a 2 s timeout, a 10 s grace
			require.Equal(t, tc.want, dueBy(s, 2*time.Second, 10*time.Second, tc.down))
		})
	}
}

func op(call int64, in linearizability.Input, out linearizability.Output) porcupine.Operation {
	return porcupine.Operation{Call: call, Return: call + 1, Input: in, Output: out}
}

// TestAdmittedAtTakesTheEarliest202: a job is admitted no earlier than the
// earliest call whose 202 named it, keyed replays included; refusals and
// lost answers name nothing.
func TestAdmittedAtTakesTheEarliest202(t *testing.T) {
	h := []porcupine.Operation{
		op(5, linearizability.Input{Kind: linearizability.SubmitKeyed}, linearizability.Output{Outcome: linearizability.OK, ID: "a"}),
		op(3, linearizability.Input{Kind: linearizability.SubmitKeyed}, linearizability.Output{Outcome: linearizability.OK, ID: "a"}),
		op(4, linearizability.Input{Kind: linearizability.Submit}, linearizability.Output{Outcome: linearizability.OK, ID: "b"}),
		op(2, linearizability.Input{Kind: linearizability.SubmitWait}, linearizability.Output{Outcome: linearizability.Deadline, ID: "c"}),
		op(1, linearizability.Input{Kind: linearizability.Submit}, linearizability.Output{Outcome: linearizability.QueueFull}),
		op(1, linearizability.Input{Kind: linearizability.Submit}, linearizability.Output{Outcome: linearizability.Unknown}),
	}
	require.Equal(t, map[string]int64{"a": 3, "b": 4, "c": 2}, admittedAt(h))
}

// TestLateViewsOnlyAfterDue: a view of a live job counts once its call is
// past the job's due time; a terminal view never does.
func TestLateViewsOnlyAfterDue(t *testing.T) {
	snap := func(call int64, id string, st linearizability.State) porcupine.Operation {
		return op(call, linearizability.Input{Kind: linearizability.Snapshot, ID: id}, linearizability.Output{Outcome: linearizability.OK, State: st})
	}
	h := []porcupine.Operation{
		snap(10, "a", linearizability.StatePending),
		snap(11, "a", linearizability.StateRunning),
		snap(12, "a", linearizability.StateDone),
		snap(12, "b", linearizability.StatePending),
	}
	n, late := lateViews(h, map[string]int64{"a": 10, "b": 20})
	require.Equal(t, 1, n)
	require.Len(t, late, 1)
	require.Contains(t, late[0], "job a seen RUNNING")
}
