package jobapi

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/wire"
)

func TestListEncoding(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	snaps := []ledger.Snapshot{
		{ID: "A", TaskID: "t<", State: ledgertype.Pending, CreatedAt: at},
		{ID: "B", State: ledgertype.Failed, Err: errors.New("x"), CreatedAt: at, StartedAt: at, CompletedAt: at},
	}
	for _, page := range []ledger.Page{{}, {Jobs: snaps[:1], Next: "AAAAAAAAAAE"}, {Jobs: snaps}} {
		body := wire.Page{Jobs: []wire.Snapshot{}, NextCursor: page.Next}
		for _, s := range page.Jobs {
			body.Jobs = append(body.Jobs, newSnapshotBody(s, time.Minute))
		}
		want, err := json.Marshal(body)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendList(nil, page, time.Minute)))
	}
}
