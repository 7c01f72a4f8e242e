package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/linearizability"
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
// The first submit of a fresh key's first turn is keyRace submits at
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
	keyRace       = 3
	conflictEvery = 8
)

// keyedRun is the bookkeeping of a run's keyed submits, shared by every
// life and replica of the run. Safe for concurrent use.
type keyedRun struct {
	n                  atomic.Int64 // keyed submits begun
	replays, conflicts atomic.Int64 // replays of a key's job; refusals for another request

	mu  sync.Mutex      // guards ids
	ids map[string]bool // the jobs keyed 202s named (HTTP levels)
}

// keyTurn is one keyed submit to send: its key's name, the key's place k
// among the keys, whether it sends another request than the key's, and
// whether it opens a fresh key (then it is keyRace submits at once).
type keyTurn struct {
	name        string
	k           int
	other, race bool
}

// next returns the run's next keyed submit, under one of keys keys.
func (k *keyedRun) next(keys int, r *rand.Rand) keyTurn {
	n := int(k.n.Add(1) - 1)
	turn := n / keyRun
	i, gen := turn%keys, turn/(keys*keyLaps)
	t := keyTurn{name: fmt.Sprintf("key-%d-%d", gen, i), k: i}
	if turn%(keys*keyLaps) < keys && n%keyRun == 0 {
		t.race = true
		return t
	}
	t.other = r.IntN(conflictEvery) == 0
	return t
}

// race sends one keyed submit through c and through each of racers at
// once, released together, and returns when all have returned.
func race[C any](c C, racers []C, send func(C)) {
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

// named records that a keyed 202 named id, and reports whether it was the
// first to.
func (k *keyedRun) named(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids[id] {
		return false
	}
	if k.ids == nil {
		k.ids = make(map[string]bool)
	}
	k.ids[id] = true
	return true
}

// keyedBody returns the task id and params of the key name: the key's own
// body, or, other, another one. The echo job sleeps a time fixed by the
// key's place k among the keys.
func (w *httpWorkload) keyedBody(name string, k int, other bool) (string, string) {
	sleep := int64(k*7) % (w.cfg.MaxSleep.Milliseconds() + 1)
	n := name
	if other {
		n += "-other"
	}
	return "task-" + name, fmt.Sprintf(`{"n":%q,"sleep_ms":%d}`, n, sleep)
}

// submitKeyed sends the run's next keyed submit through c, or, the first
// of a fresh key, keyRace of them at once through c and the racing
// clients.
func (w *httpWorkload) submitKeyed(ctx context.Context, c *HTTPClient, racers *[]*HTTPClient, r *rand.Rand) {
	t := w.keyed.next(w.cfg.Keys, r)
	task, params := w.keyedBody(t.name, t.k, t.other)
	send := func(c *HTTPClient) { w.sendKeyed(ctx, c, t.name, task, params) }
	if !t.race {
		send(c)
		return
	}
	race(c, w.racingClients(racers), send)
}

// racingClients returns the keyRace-1 clients that race a submitter's
// submits of a fresh key, kept in racers between races: each sends
// through the server w.peer names for it, or, where it names none (no
// other replica, or one that is down), through w.api. A client whose
// server changed is replaced.
func (w *httpWorkload) racingClients(racers *[]*HTTPClient) []*HTTPClient {
	for j := range keyRace - 1 {
		api := w.api
		if w.peer != nil {
			if p := w.peer(j); p != nil {
				api = p
			}
		}
		switch {
		case j == len(*racers):
			*racers = append(*racers, w.rec.HTTPClient(api))
		case (*racers)[j].api != api:
			(*racers)[j] = w.rec.HTTPClient(api)
		}
	}
	return *racers
}

// sendKeyed sends one keyed submit, and counts what came back as a plain
// submit's (countSubmit), but for a 422 and a replay: a job is accepted by
// the first keyed 202 that names it; the later ones are replays.
func (w *httpWorkload) sendKeyed(ctx context.Context, c *HTTPClient, key, task, params string) {
	id, outcome, err := c.SubmitKeyed(ctx, key, task, params)
	switch {
	case err == nil && outcome == linearizability.KeyConflict:
		w.keyed.conflicts.Add(1)
	case err == nil && outcome == linearizability.OK && !w.keyed.named(id):
		w.keyed.replays.Add(1)
	default:
		w.countSubmit(id, outcome, err)
	}
}
