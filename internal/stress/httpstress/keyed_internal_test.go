package httpstress

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/client"
	"github.com/jobledger/jobledger/internal/stress"
)

// TestRacingClientsGoThroughPeers pins where a fresh key's racing clients
// send: through the servers the peer function names (the other replicas),
// through the workload's own server while a peer is down, and through a
// new client once a peer's server changes.
func TestRacingClientsGoThroughPeers(t *testing.T) {
	api := func(addr string) *client.Client {
		c, err := client.New("http://"+addr, client.Options{})
		require.NoError(t, err)
		return c
	}
	own, a, b, b2 := api("127.0.0.1:1"), api("127.0.0.1:2"), api("127.0.0.1:3"), api("127.0.0.1:4")
	peers := []*client.Client{a, b}
	w := &httpWorkload{httpRun: newHTTPRun(stress.Config{}), api: own}
	w.peer = func(j int) *client.Client { return peers[j] }

	var racers []*HTTPClient
	got := w.racingClients(&racers)
	require.Len(t, got, stress.KeyRace-1)
	require.Same(t, a, got[0].api)
	require.Same(t, b, got[1].api)
	first := got[0]

	peers[1] = nil // b is down
	got = w.racingClients(&racers)
	require.Same(t, first, got[0], "a client whose server is unchanged is kept")
	require.Same(t, own, got[1].api, "a racer whose peer is down sends through the workload's own server")

	peers[1] = b2 // b is back, at another address
	got = w.racingClients(&racers)
	require.Same(t, b2, got[1].api)

	w.peer = nil // no replicas
	got = w.racingClients(&racers)
	for _, c := range got {
		require.Same(t, own, c.api)
	}
}
