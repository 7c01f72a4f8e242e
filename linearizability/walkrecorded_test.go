package linearizability_test

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	lin "github.com/jobledger/jobledger/linearizability"
)

// TestCheckRecordedWalks: the jobs of a recorded walk come from the HTTP
// history beside it: admitted by a 202 or a waiting submit, held after the
// walk when a later read or keyed 202 found them; a job no reply named is
// allowed once per POST of unknown outcome called before the walk ended,
// but for a keyed one called after its key was held for good.
func TestCheckRecordedWalks(t *testing.T) {
	post := func(call, ret int64, id string) porcupine.Operation {
		return porcupine.Operation{Call: call, Return: ret, Input: lin.Input{Kind: lin.Submit, TaskID: "t", Value: "{}"},
			Output: lin.Output{Outcome: lin.OK, ID: id}}
	}
	waitPost := func(call, ret int64, id string) porcupine.Operation {
		return porcupine.Operation{Call: call, Return: ret, Input: lin.Input{Kind: lin.SubmitWait, TaskID: "t", Value: "{}"},
			Output: lin.Output{Outcome: lin.OK, ID: id, State: lin.StateDone, TaskID: "t", Value: "{}"}}
	}
	lostPost := func(call int64) porcupine.Operation {
		return porcupine.Operation{Call: call, Return: lin.Pending, Input: lin.Input{Kind: lin.Submit, TaskID: "t", Value: "{}"},
			Output: lin.Output{Outcome: lin.Unknown}}
	}
	read := func(call, ret int64, id string, found bool) porcupine.Operation {
		out := lin.Output{Outcome: lin.OK, State: lin.StatePending, TaskID: "t"}
		if !found {
			out = lin.Output{Outcome: lin.NotFound}
		}
		return porcupine.Operation{Call: call, Return: ret, Input: lin.Input{Kind: lin.Snapshot, ID: id}, Output: out}
	}
	keyedPost := func(call, ret int64, id string) porcupine.Operation {
		out := lin.Output{Outcome: lin.OK, ID: id}
		if id == "" {
			ret, out = lin.Pending, lin.Output{Outcome: lin.Unknown}
		}
		return porcupine.Operation{Call: call, Return: ret, Input: lin.Input{Kind: lin.SubmitKeyed, Key: "k", Digest: "d", TaskID: "t", Value: "{}"},
			Output: out}
	}
	base := []porcupine.Operation{post(1, 2, "a"), waitPost(3, 4, "b")}
	walk := func(call, ret int64, pages ...[]string) lin.Walk {
		return lin.Walk{Call: call, Return: ret, Pages: pages}
	}
	for _, c := range []struct {
		name     string
		history  []porcupine.Operation
		walks    []lin.Walk
		retained bool
		want     error
	}{
		{"both listed, newest first", append(base, read(20, 21, "a", true)), []lin.Walk{walk(10, 12, []string{"b"}, []string{"a"})}, false, nil},
		{"a held after and skipped", append(base, read(20, 21, "a", true)), []lin.Walk{walk(10, 12, []string{"b"})}, false, lin.ErrWalkSkipped},
		{"a last found before the walk: may have gone", append(base, read(5, 6, "a", true), read(20, 21, "a", false)), []lin.Walk{walk(10, 12, []string{"b"})}, false, nil},
		{"nothing evicted: a owed with no read after", base, []lin.Walk{walk(10, 12, []string{"b"})}, true, lin.ErrWalkSkipped},
		{"nothing evicted: a lost POST's job owed nothing", append(base, lostPost(8)), []lin.Walk{walk(10, 12, []string{"b", "a"})}, true, nil},
		{"listed twice", base, []lin.Walk{walk(10, 12, []string{"b", "a"}), walk(13, 15, []string{"b"}, []string{"b"})}, false, lin.ErrWalkDuplicate},
		{"oldest first", base, []lin.Walk{walk(10, 12, []string{"a", "b"})}, false, lin.ErrWalkNotNewest},
		{"a job nobody named", base, []lin.Walk{walk(10, 12, []string{"x", "b", "a"})}, false, lin.ErrWalkUnknownItem},
		{"a job a lost POST may have admitted", append(base, lostPost(8)), []lin.Walk{walk(10, 12, []string{"x", "b", "a"})}, false, nil},
		{"a lost POST after the walk explains nothing", append(base, lostPost(30)), []lin.Walk{walk(10, 12, []string{"x", "b", "a"})}, false, lin.ErrWalkUnknownItem},
		{"one lost POST, two unnamed jobs", append(base, lostPost(8)), []lin.Walk{walk(10, 12, []string{"x", "y", "b", "a"})}, false, lin.ErrWalkUnknownItem},
		{"lost POSTs out of call order", append(base, lostPost(30), lostPost(8)), []lin.Walk{walk(10, 12, []string{"x", "b", "a"})}, false, nil},
		{"a keyed 202 after the walk finds its job", []porcupine.Operation{keyedPost(1, 2, "c"), keyedPost(20, 21, "c")}, []lin.Walk{walk(10, 12, []string{})}, false, lin.ErrWalkSkipped},
		{"a keyed 202 before the walk: c may have gone", []porcupine.Operation{keyedPost(1, 2, "c"), keyedPost(5, 6, "c")}, []lin.Walk{walk(10, 12, []string{})}, false, nil},
		{"a keyed POST lost before its key was held may have admitted", []porcupine.Operation{keyedPost(1, lin.Pending, ""), keyedPost(3, 4, "c")}, []lin.Walk{walk(10, 12, []string{"x", "c"})}, true, nil},
		{"nothing evicted: a keyed POST lost on a held key admitted nothing", []porcupine.Operation{keyedPost(1, 2, "c"), keyedPost(5, lin.Pending, "")}, []lin.Walk{walk(10, 12, []string{"x", "c"})}, true, lin.ErrWalkUnknownItem},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := lin.CheckRecordedWalks(c.history, c.walks, c.retained)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
		})
	}
}
