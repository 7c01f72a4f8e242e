package jobtable

import (
	"encoding/base32"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewIDCarries128Bits: each id is 26 base32 characters that decode to
// 16 bytes, ids do not repeat across many batches, and every bit position
// varies: no byte of a batch is shared or left zero.
func TestNewIDCarries128Bits(t *testing.T) {
	const n = 50 * idBatch
	seen := make(map[string]bool, n)
	var or, and [idBytes]byte
	for i := range and {
		and[i] = 0xff
	}
	for range n {
		id := newID()
		require.Len(t, id, 26)
		raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(id)
		require.NoError(t, err, id)
		require.Len(t, raw, idBytes)
		require.False(t, seen[id], "id %s repeated", id)
		seen[id] = true
		for i, b := range raw {
			or[i] |= b
			and[i] &= b
		}
	}
	varying := 0
	for i := range or {
		varying += bits.OnesCount8(or[i] &^ and[i])
	}
	require.Equal(t, 8*idBytes, varying, "every one of the 128 bits takes both values")
}
