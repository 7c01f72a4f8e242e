package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/linearizability"
)

// Keyed submits of the HTTP levels (HTTPConfig.KeyedEvery): POST /jobs
// with an Idempotency-Key, recorded for linearizability.CheckHTTP's key
// model. The run's keyed submits take Keys keys in turn, keyRun submits
// each: the keyRun submits of a turn come from whichever submitters draw
// a keyed submit then, so a fresh key often meets two or more at once.
// A key comes back Keys turns (a lap) later, keyLaps-1 times (keyLaps
// turns in all), to replay its job if the job is still retained (always,
// where retention evicts nothing: across the restarts of the crash test
// and the replicas of the replicas test, so that a store that loses a
// key, or two replicas that each create a job for one, create a second
// job) or to create a new one once retention freed it; then the keys are
// replaced by fresh ones. The first submit of a fresh key's first turn is
// keyRace submits at once, from the submitter and its racing clients,
// released together: the race that a key checked apart from the admission
// loses. A key's body is fixed (its task id and params name the key), so
// that a repeat is a replay; one keyed submit in conflictEvery sends
// another body, which a retained job of the key refuses with 422.

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
	replays, conflicts atomic.Int64 // 202s naming a job a keyed 202 named before; 422s

	mu  sync.Mutex      // guards ids
	ids map[string]bool // the jobs keyed 202s named
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
// clients (made as needed and kept in racers, each used by one goroutine
// at a time).
func (w *httpWorkload) submitKeyed(ctx context.Context, c *HTTPClient, racers *[]*HTTPClient, r *rand.Rand) {
	n := int(w.keyed.n.Add(1) - 1)
	turn := n / keyRun
	k, gen := turn%w.cfg.Keys, turn/(w.cfg.Keys*keyLaps)
	name := fmt.Sprintf("key-%d-%d", gen, k)
	if turn%(w.cfg.Keys*keyLaps) >= w.cfg.Keys || n%keyRun != 0 {
		task, params := w.keyedBody(name, k, r.IntN(conflictEvery) == 0)
		w.sendKeyed(ctx, c, name, task, params)
		return
	}
	for len(*racers) < keyRace-1 {
		*racers = append(*racers, w.rec.HTTPClient(w.api))
	}
	task, params := w.keyedBody(name, k, false)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for _, rc := range append([]*HTTPClient{c}, *racers...) {
		wg.Go(func() {
			<-release
			w.sendKeyed(ctx, rc, name, task, params)
		})
	}
	close(release)
	wg.Wait()
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
