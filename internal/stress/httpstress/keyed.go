package httpstress

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/linearizability"
)

// Keyed submits over HTTP (stress.Config.KeyedEvery): POST /jobs with an
// Idempotency-Key, under the keys and turns of the core's keyed submits
// (stress.KeyTurn); the racing clients of a fresh key send through the
// other replicas, where there are.

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
// of a fresh key, stress.KeyRace of them at once through c and the racing
// clients.
func (w *httpWorkload) submitKeyed(ctx context.Context, c *HTTPClient, racers *[]*HTTPClient, r *rand.Rand) {
	t := w.NextKey(r)
	task, params := w.keyedBody(t.Name, t.K, t.Other)
	send := func(c *HTTPClient) { w.sendKeyed(ctx, c, t.Name, task, params) }
	if !t.Race {
		send(c)
		return
	}
	stress.Race(c, w.racingClients(racers), send)
}

// racingClients returns the stress.KeyRace-1 clients that race a submitter's
// submits of a fresh key, kept in racers between races: each sends
// through the server w.peer names for it, or, where it names none (no
// other replica, or one that is down), through w.api. A client whose
// server changed is replaced.
func (w *httpWorkload) racingClients(racers *[]*HTTPClient) []*HTTPClient {
	for j := range stress.KeyRace - 1 {
		api := w.api
		if w.peer != nil {
			if p := w.peer(j); p != nil {
				api = p
			}
		}
		switch {
		case j == len(*racers):
			*racers = append(*racers, NewHTTPClient(w.rec, api))
		case (*racers)[j].api != api:
			(*racers)[j] = NewHTTPClient(w.rec, api)
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
		w.Conflicted()
	case err == nil && outcome == linearizability.OK && !w.named(id):
		w.Replayed()
	default:
		w.countSubmit(id, outcome, err)
	}
}
