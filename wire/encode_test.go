package wire_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/wire"
)

func TestSnapshotEncoding(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	whole := time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC)
	for _, b := range []wire.Snapshot{
		{JobID: "A", State: wire.Pending, CreatedAt: at},
		{JobID: "B", TaskID: "t", State: wire.Failed, Error: "x", CreatedAt: at, StartedAt: at, CompletedAt: whole, ExpiresAt: whole.Add(time.Minute)},
		{JobID: "C", TaskID: "q\"\\\n\r\t\b\f\x01<>&é\u2028\u2029\xff end", State: wire.Done},
	} {
		want, err := json.Marshal(b)
		require.NoError(t, err)
		require.Equal(t, string(want), string(wire.AppendSnapshot(nil, b)))
	}
}

func TestAcceptedEncoding(t *testing.T) {
	for _, id := range []string{"A", "7Q4X", "q\"\\<>&\u2028"} {
		a := wire.Accepted{JobID: id, State: wire.Pending}
		want, err := json.Marshal(a)
		require.NoError(t, err)
		require.Equal(t, string(want), string(wire.AppendAccepted(nil, a)))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\xff\u2028<tag>&\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(wire.AppendString(nil, s)))
	})
}
