package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// TestMemoryCloseChangesNothing: the rest of Close's rule is the
// conformance suite's (Closed); the memory store's Stats still reads the
// table after it.
func TestMemoryCloseChangesNothing(t *testing.T) {
	m, err := ledger.NewMemory[string, string](ledger.Config{MaxQueue: 1})
	require.NoError(t, err)
	_, _, err = m.Submit(context.Background(), ledger.Submission{TaskID: "t"}, "req")
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.Equal(t, 1, m.Stats().Depth, "Close changes nothing")
}

func TestMemoryInvalidConfig(t *testing.T) {
	_, err := ledger.NewMemory[string, string](ledger.Config{MaxQueue: 1 << 40})
	require.ErrorIs(t, err, ledger.ErrInvalidConfig)
}

// failing is a codec that refuses to encode "bad" and to decode "corrupt".
type failing struct{}

var errCodec = errors.New("codec refused")

func (failing) Encode(v string) ([]byte, error) {
	if v == "bad" {
		return nil, errCodec
	}
	return []byte(v), nil
}

func (failing) Decode(b []byte) (string, error) {
	if string(b) == "corrupt" {
		return "", errCodec
	}
	return string(b), nil
}

func TestWithCodecs(t *testing.T) {
	ctx := context.Background()
	raw, err := ledger.NewMemory[[]byte, []byte](ledger.Config{MaxQueue: 4})
	require.NoError(t, err)
	l := ledger.WithCodecs[string, string](raw, failing{}, failing{})

	_, _, err = l.Submit(ctx, ledger.Submission{TaskID: "t"}, "bad")
	require.ErrorIs(t, err, errCodec)
	require.Zero(t, raw.Stats().Depth, "an encoding error admits nothing")

	id, _, err := l.Submit(ctx, ledger.Submission{TaskID: "t"}, "hello")
	require.NoError(t, err)
	req, err := l.TakeRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "hello", req)
	_, err = l.Start(ctx, id)
	require.NoError(t, err)
	_, err = l.Finish(ctx, id, "bad")
	require.ErrorIs(t, err, errCodec)
	st, err := l.State(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledgertype.Running, st, "an encoding error leaves the job as it was")
	snap, err := l.Finish(ctx, id, "world")
	require.NoError(t, err)
	require.Equal(t, ledgertype.Done, snap.State)
	res, _, err := l.Result(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "world", res)

	id2, _, err := l.Submit(ctx, ledger.Submission{TaskID: "t"}, "corrupt")
	require.NoError(t, err)
	_, err = l.TakeRequest(ctx, id2)
	require.ErrorIs(t, err, errCodec)
	_, err = raw.Finish(ctx, id2, []byte("corrupt"))
	require.NoError(t, err)
	_, snap, err = l.Result(ctx, id2)
	require.ErrorIs(t, err, errCodec)
	require.Equal(t, ledgertype.Done, snap.State)
}

func TestStockCodecs(t *testing.T) {
	b, err := ledger.String{}.Encode("héllo")
	require.NoError(t, err)
	s, err := ledger.String{}.Decode(b)
	require.NoError(t, err)
	require.Equal(t, "héllo", s)
	b, err = ledger.Bytes{}.Encode([]byte{0, 1})
	require.NoError(t, err)
	got, err := ledger.Bytes{}.Decode(b)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 1}, got)
}
