package jobapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// TestSharedEndsIgnoredOnceDrained pins a defect: a ledger's OnEnd has no
// way to unregister, so a server on a caller's shared ledger went on
// taking in every end of every replica after Shutdown and Close, under its
// lock, for as long as the ledger lived. Once drained it returns at once.
func TestSharedEndsIgnoredOnceDrained(t *testing.T) {
	t.Parallel()
	hb := newHub(t, newFakeClock(), 8)
	a := newHarnessOn(t, hb.view(), jobapi.Options{Model: newGate()}, nil)
	other := hb.view()
	end := func() {
		t.Helper()
		snap := submitTo(t, other, "elsewhere")
		_, err := other.Fail(context.Background(), snap.ID, errors.New("canceled"))
		require.NoError(t, err)
	}
	end()
	require.Equal(t, uint64(1), jobapi.EndsHeard(a.srv), "a serving replica hears every end")

	require.NoError(t, a.srv.Shutdown(context.Background()))
	end()
	require.Equal(t, uint64(1), jobapi.EndsHeard(a.srv), "a drained replica takes in no end")
	require.NoError(t, a.srv.Close())
	end()
	require.Equal(t, uint64(1), jobapi.EndsHeard(a.srv), "nor a closed one")
}
