package linearizability_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	lin "github.com/jobledger/jobledger/linearizability"
)

// TestHistoryWalksRoundTrip: walks written with a history read back as
// they were, empty pages included; lines that break the format are
// refused, and so is a walk with no page at all.
func TestHistoryWalksRoundTrip(t *testing.T) {
	hf := lin.HistoryFile{MaxQueue: 2, Level: "http", Retained: true, KnowsTTL: true,
		Ops: []porcupine.Operation{{Call: 1, Return: 2, Input: lin.Input{Kind: lin.Submit, TaskID: "t", Value: "{}"}, Output: lin.Output{Outcome: lin.OK, ID: "a"}}},
		Walks: []lin.Walk{
			{Call: 3, Return: 6, Pages: [][]string{{"b", "a"}, {}, {"c"}}},
			{Call: 7, Return: 8, Pages: [][]string{{}}},
		}}
	var buf bytes.Buffer
	require.NoError(t, lin.WriteHistory(&buf, hf))
	got, err := lin.ReadHistory(&buf)
	require.NoError(t, err)
	require.Equal(t, hf.Walks, got.Walks)
	require.Len(t, got.Ops, 1)

	for _, bad := range []string{
		`{"walk":2,"call":1,"return":2,"page":[]}`, // walk 2 before walk 1
		`{"walk":1,"call":1,"return":2}`,           // no page
		`{"walk":1,"call":1,"return":2,"page":[]}` + "\n" + `{"walk":1,"call":1,"return":3,"page":[]}`, // another return
		`{"walk":1,"call":1,"return":2,"page":[],"extra":1}`,                                           // unknown field
		`{"walk":1,"call":5,"return":2,"page":[]}`,                                                     // return before call
	} {
		_, err := lin.ReadHistory(strings.NewReader("# level: http\n" + bad + "\n"))
		require.Error(t, err, bad)
	}
	hf.Walks = append(hf.Walks, lin.Walk{Call: 9, Return: 10})
	require.Error(t, lin.WriteHistory(&buf, hf), "a walk with no page")
}
