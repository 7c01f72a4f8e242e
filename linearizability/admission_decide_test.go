package linearizability

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

// The sweep (admission_decide.go) against porcupine, the reference: on
// generated histories of a correct counter and on mutations of them, both
// must give the same verdict on every one. Each history is small enough for
// porcupine (at most about 30 operations); between them they cover the
// bound 0 to 4, ties of call and return times, operations pending forever,
// unknown outcomes that did or did not take effect, a leading set-depth,
// and, at the HTTP level, ends seen late or never and reads that narrow
// them. Every violation's window must be rejected by porcupine too.

// diffCounts tallies a differential run.
type diffCounts struct {
	legal, illegal, agree, skipped int
}

func (c diffCounts) String() string {
	return fmt.Sprintf("%d histories: %d linearizable, %d not, %d agreeing with porcupine, %d skipped (porcupine timed out)",
		c.legal+c.illegal+c.skipped, c.legal, c.illegal, c.agree, c.skipped)
}

// differential checks one history with both checkers.
func differential(t *testing.T, c *diffCounts, h []porcupine.Operation, limit int, http bool) {
	t.Helper()
	model := AdmissionModel(limit)
	if http {
		model = HTTPAdmissionModel(limit)
	}
	want := porcupine.CheckOperationsTimeout(model, h, 10*time.Second)
	if want == porcupine.Unknown {
		c.skipped++
		return
	}
	v := decideAdmission(h, limit, http)
	require.Empty(t, v.Unsupported)
	if v.Linearizable != (want == porcupine.Ok) {
		t.Fatalf("sweep says linearizable=%v, porcupine %v, at max_queue %d (http %v):\n%s", v.Linearizable, want, limit, http, dumpHistory(h))
	}
	c.agree++
	if v.Linearizable {
		c.legal++
		return
	}
	c.illegal++
	single := model
	single.Partition = nil
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(single, v.Window, 10*time.Second),
		"the window is linearizable: %s\nwindow:\n%s\nhistory:\n%s", v.Message, dumpHistory(v.Window), dumpHistory(h))
}

// diffN and diffSeed size TestAdmissionSweepAgreesWithPorcupine: run it
// with -args -admission.n=200000 -admission.seed=N to search further.
var (
	diffN    = flag.Int("admission.n", 5000, "histories per level in TestAdmissionSweepAgreesWithPorcupine (a tenth with -short)")
	diffSeed = flag.Uint64("admission.seed", 0, "first seed of TestAdmissionSweepAgreesWithPorcupine")
)

func TestAdmissionSweepAgreesWithPorcupine(t *testing.T) {
	n, seed := *diffN, *diffSeed
	if testing.Short() {
		n /= 10
	}
	for _, level := range []struct {
		name string
		http bool
		gen  func(*rand.Rand) ([]porcupine.Operation, int)
		mut  func(*rand.Rand, []porcupine.Operation) []porcupine.Operation
	}{
		{"table", false, genTableHistory, mutateTableHistory},
		{"http", true, genHTTPHistory, mutateHTTPHistory},
	} {
		t.Run(level.name, func(t *testing.T) {
			var c diffCounts
			for i := range n {
				r := rand.New(rand.NewPCG(seed+uint64(i), 0xad5))
				h, limit := level.gen(r)
				switch i % 4 {
				case 1: // mutated
					for range 1 + r.IntN(3) {
						h = level.mut(r, h)
					}
				case 2: // kept in shape, outcomes drawn at random
					h = randomOutcomes(r, h, level.http)
				case 3: // a few operations, all at random, crowded together
					h = randomHistory(r, level.http)
				}
				differential(t, &c, h, limit, level.http)
			}
			t.Log(c)
			require.Greater(t, c.legal, n/5, "too few linearizable histories")
			require.Greater(t, c.illegal, n/5, "too few violations")
		})
	}
}

// prefixes returns the prefixes of proj, in call order, of 1 to n
// operations: histories that start at the initial state, as the models
// do, and end anywhere.
func prefixes(proj []porcupine.Operation, n int) [][]porcupine.Operation {
	ops := slices.Clone(proj)
	sortByCall(ops)
	var out [][]porcupine.Operation
	for end := 1; end <= min(len(ops), n); end++ {
		out = append(out, ops[:end])
	}
	return out
}

func dumpHistory(h []porcupine.Operation) string {
	var b []byte
	ops := slices.Clone(h)
	sortByCall(ops)
	for _, op := range ops {
		ret := "pending"
		if op.Return != Pending {
			ret = fmt.Sprint(op.Return)
		}
		b = fmt.Appendf(b, "  [%d, %s] %s\n", op.Call, ret, Describe(op.Input.(Input), op.Output.(Output)))
	}
	return string(b)
}

// Compact constructors for hand-written projections.
func sub(call, ret int64, o Outcome, id string) porcupine.Operation {
	if o == Unknown {
		ret = Pending
	}
	return porcupine.Operation{Input: Input{Kind: Submit}, Output: Output{Outcome: o, ID: id}, Call: call, Return: ret}
}

func fin(call, ret int64, o Outcome) porcupine.Operation {
	if o == Unknown {
		ret = Pending
	}
	return porcupine.Operation{Input: Input{Kind: Finish, ID: "j"}, Output: Output{Outcome: o}, Call: call, Return: ret}
}

func depthAt(d int) porcupine.Operation {
	return porcupine.Operation{Input: Input{Kind: SetDepth, Depth: d}, Output: Output{Outcome: OK}, Call: -1, Return: -1}
}

func endOf(id string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: endClientBase, Input: Input{Kind: End, ID: id}, Output: Output{Outcome: OK}, Call: call, Return: ret}
}

func sawPending(id string, call, ret int64) porcupine.Operation {
	return porcupine.Operation{Input: Input{Kind: Snapshot, ID: id}, Output: Output{Outcome: OK, State: StatePending}, Call: call, Return: ret}
}

// TestAdmissionSweepCases pins the cases the proof turns on, each checked
// by both the sweep and porcupine.
func TestAdmissionSweepCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		http  bool
		limit int
		h     []porcupine.Operation
		ok    bool
	}{
		{"accepted beyond the bound", false, 1, []porcupine.Operation{sub(0, 1, OK, ""), sub(2, 3, OK, "")}, false},
		{"a concurrent end frees the slot", false, 1, []porcupine.Operation{sub(0, 1, OK, ""), fin(2, 5, OK), sub(3, 4, OK, "")}, true},
		{"rejected below the bound", false, 2, []porcupine.Operation{sub(0, 1, OK, ""), sub(2, 3, QueueFull, "")}, false},
		{"an unknown submit may have filled the queue", false, 1, []porcupine.Operation{sub(0, 0, Unknown, ""), sub(2, 3, QueueFull, "")}, true},
		{"an unknown submit may have had no effect", false, 1, []porcupine.Operation{sub(0, 0, Unknown, ""), sub(2, 3, OK, "")}, true},
		{"an unknown end may have freed a slot", false, 1, []porcupine.Operation{sub(0, 1, OK, ""), fin(2, 0, Unknown), sub(3, 4, OK, "")}, true},
		{"an end at depth zero", false, 1, []porcupine.Operation{fin(0, 1, OK)}, false},
		{"a set-depth above the bound, two ends short", false, 1, []porcupine.Operation{depthAt(3), fin(0, 1, OK), fin(2, 3, OK), sub(4, 5, OK, "")}, false},
		{"a set-depth above the bound, three ends", false, 1, []porcupine.Operation{depthAt(3), fin(0, 1, OK), fin(2, 3, OK), fin(2, 3, OK), sub(4, 5, OK, "")}, true},
		{"a return at the time of a call overlaps it", false, 1, []porcupine.Operation{sub(0, 2, OK, ""), fin(2, 2, OK), sub(2, 3, OK, "")}, true},
		{"a return before a call precedes it", false, 1, []porcupine.Operation{sub(0, 2, OK, ""), fin(3, 3, OK), sub(2, 2, OK, "")}, false},
		{"the bound is zero", false, 0, []porcupine.Operation{sub(0, 1, QueueFull, ""), sub(2, 3, OK, "")}, false},
		{"an end seen late freed the slot early", true, 1, []porcupine.Operation{sub(0, 1, OK, "a"), endOf("a", 0, 10), sub(2, 3, OK, "b"), endOf("b", 2, Pending)}, true},
		{"a read pins a job live", true, 1, []porcupine.Operation{sub(0, 1, OK, "a"), endOf("a", 0, 10), sawPending("a", 4, 5), sub(2, 3, OK, "b")}, false},
		// c needs a slot at 3-4: it must be b's (due by 6), not a's, so
		// that two jobs are live for the 429 at 7-8.
		{"the room goes to the end due first", true, 2, []porcupine.Operation{
			sub(0, 1, OK, "a"), endOf("a", 0, 20), sub(0, 1, OK, "b"), endOf("b", 0, 6),
			sub(3, 4, OK, "c"), endOf("c", 3, Pending), sub(7, 8, QueueFull, ""),
		}, true},
		{"a job ended twice", true, 1, []porcupine.Operation{sub(0, 1, OK, "a"), endOf("a", 0, 5), endOf("a", 0, 6)}, false},
		{"a job read but never admitted", true, 1, []porcupine.Operation{sawPending("a", 0, 1)}, false},
		{"a 429 after every job ended", true, 1, []porcupine.Operation{sub(0, 1, OK, "a"), endOf("a", 0, 2), sub(3, 4, QueueFull, "")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := AdmissionModel(tc.limit)
			if tc.http {
				model = HTTPAdmissionModel(tc.limit)
			}
			require.Equal(t, tc.ok, porcupine.CheckOperations(model, tc.h), "porcupine")
			v := decideAdmission(tc.h, tc.limit, tc.http)
			require.Empty(t, v.Unsupported)
			require.Equal(t, tc.ok, v.Linearizable, "sweep: %s", v.Message)
		})
	}
}

// TestCheckFallsBackToPorcupine: a projection the sweep does not cover (an
// unknown outcome that returned, which the recorder never writes) is
// checked by porcupine, and the report says so.
func TestCheckFallsBackToPorcupine(t *testing.T) {
	h := []porcupine.Operation{
		{ClientId: 0, Input: Input{Kind: Submit, TaskID: "t1"}, Output: Output{Outcome: OK, ID: "a"}, Call: 1, Return: 2},
		{ClientId: 1, Input: Input{Kind: Submit, TaskID: "t2"}, Output: Output{Outcome: Unknown}, Call: 3, Return: 4},
	}
	rep := Check(h, CheckConfig{MaxQueue: 2, NoVisualize: true})
	require.Equal(t, Linearizable, rep.Verdict, rep.Message)
	require.Equal(t, "porcupine, as the sweep does not cover an operation of unknown outcome that returned", rep.AdmissionMethod)

	rep = Check(h[:1], CheckConfig{MaxQueue: 1, AdmissionPorcupine: true})
	require.Equal(t, Linearizable, rep.Verdict, rep.Message)
	require.Equal(t, "porcupine", rep.AdmissionMethod)
	rep = Check(h[:1], CheckConfig{MaxQueue: 1})
	require.Equal(t, "sweep", rep.AdmissionMethod)
}

func TestAboveMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times := make([]int64, r.IntN(40))
		for i := range times {
			times[i] = r.Int64N(60)
		}
		slices.Sort(times)
		times = slices.Compact(times)
		x, hint := r.Int64N(70)-5, r.IntN(len(times)+3)-1
		want, _ := slices.BinarySearch(times, x+1)
		require.Equal(t, want, above(times, x, hint), "times %v x %d hint %d", times, x, hint)
	}
}
