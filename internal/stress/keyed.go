package stress

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Keyed submits (Config.KeyedEvery): SubmitKeyed at the table level, POST
// /jobs with an Idempotency-Key at the HTTP levels, recorded for the key
// model (linearizability's KeyModel, HTTPKeyModel over HTTP). The run's
// keyed submits take Keys keys in turn, keyRun submits each: the keyRun
// submits of a turn come from whichever submitters draw a keyed submit
// then, so a fresh key often meets two or more at once. A key comes back
// Keys turns (a lap) later, keyLaps-1 times (keyLaps turns in all), to
// replay its job if the job is still retained (always, where retention
// evicts nothing: across the restarts of the crash test and the replicas
// of the replicas test, so that a store that loses a key, or two replicas
// that each create a job for one, create a second job) or to create a new
// one once retention freed it; then the keys are replaced by fresh ones.
// The first submit of a fresh key's first turn is KeyRace submits at
// once, from the submitter and its racing clients, released together: the
// race that a key checked apart from the admission loses. In the replicas
// test the racing clients send through the other replicas, so that the
// race is between servers on one store. A key's request
// is fixed (its task id and request name the key), so that a repeat is a
// replay; one keyed submit in conflictEvery sends another, which a
// retained job of the key refuses (ErrKeyConflict, 422).

const (
	keyRun        = 4
	keyLaps       = 4
	conflictEvery = 8
)

// KeyRace is how many submits of a fresh key's first turn are sent at
// once: the submitter's and those of its racing clients.
const KeyRace = 3

// keyedRun is the bookkeeping of a run's keyed submits, shared by every
// life and replica of the run. Safe for concurrent use.
type keyedRun struct {
	n                  atomic.Int64 // keyed submits begun
	replays, conflicts atomic.Int64 // replays of a key's job; refusals for another request
}

// KeyTurn is one keyed submit to send: its key's name, the key's place K
// among the keys, whether it sends another request than the key's
// (Other), and whether it opens a fresh key (Race: then it is KeyRace
// submits at once).
type KeyTurn struct {
	Name        string
	K           int
	Other, Race bool
}

// next returns the run's next keyed submit, under one of keys keys.
func (k *keyedRun) next(keys int, r *rand.Rand) KeyTurn {
	n := int(k.n.Add(1) - 1)
	turn := n / keyRun
	i, gen := turn%keys, turn/(keys*keyLaps)
	t := KeyTurn{Name: fmt.Sprintf("key-%d-%d", gen, i), K: i}
	if turn%(keys*keyLaps) < keys && n%keyRun == 0 {
		t.Race = true
		return t
	}
	t.Other = r.IntN(conflictEvery) == 0
	return t
}

// Race sends one keyed submit through c and through each of racers at
// once, released together, and returns when all have returned.
func Race[C any](c C, racers []C, send func(C)) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for _, rc := range append([]C{c}, racers...) {
		wg.Go(func() {
			<-release
			send(rc)
		})
	}
	close(release)
	wg.Wait()
}
