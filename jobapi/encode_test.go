package jobapi

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
)

func TestSnapshotEncoding(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	whole := time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC)
	for _, b := range []snapshotBody{
		{JobID: "A", State: "PENDING", CreatedAt: at},
		{JobID: "B", TaskID: "t", State: "FAILED", Error: "x", CreatedAt: at, StartedAt: at, CompletedAt: whole, ExpiresAt: whole.Add(time.Minute)},
		{JobID: "C", TaskID: "q\"\\\n\r\t\b\f\x01<>&é\u2028\u2029\xff end", State: "DONE"},
	} {
		want, err := json.Marshal(b)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendSnapshot(nil, b)))
	}
}

func TestAcceptedEncoding(t *testing.T) {
	for _, id := range []string{"A", "7Q4X", "q\"\\<>&\u2028"} {
		want, err := json.Marshal(acceptedBody{JobID: id, State: "PENDING"})
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendAccepted(nil, id)))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\xff\u2028<tag>&\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendString(nil, s)))
	})
}

func TestListEncoding(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	snaps := []ledger.Snapshot{
		{ID: "A", TaskID: "t<", State: ledger.Pending, CreatedAt: at},
		{ID: "B", State: ledger.Failed, Err: errors.New("x"), CreatedAt: at, StartedAt: at, CompletedAt: at},
	}
	for _, page := range []ledger.Page{{}, {Jobs: snaps[:1], Next: "AAAAAAAAAAE"}, {Jobs: snaps}} {
		body := listBody{Jobs: []snapshotBody{}, NextCursor: page.Next}
		for _, s := range page.Jobs {
			body.Jobs = append(body.Jobs, newSnapshotBody(s, time.Minute))
		}
		want, err := json.Marshal(body)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendList(nil, page, time.Minute)))
	}
}
