package stress

import (
	"math/rand/v2"
	"sync"
)

// recentIDs keeps every id a stress run admitted, and a ring of the latest,
// from which its readers pick the job to look at. Safe for concurrent use.
type recentIDs struct {
	mu   sync.Mutex // guards the fields below
	all  []string   // every id, in admission order
	ring [64]string // the latest ids
	next int        // how many ids were remembered
}

func (r *recentIDs) remember(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, id)
	r.ring[r.next%len(r.ring)] = id
	r.next++
}

// pick returns a recent id, the newest when newest is set; "" if none yet.
func (r *recentIDs) pick(rng *rand.Rand, newest bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == 0 {
		return ""
	}
	if newest {
		return r.ring[(r.next-1)%len(r.ring)]
	}
	return r.ring[rng.IntN(min(r.next, len(r.ring)))]
}

// ids returns a copy of every id remembered so far.
func (r *recentIDs) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.all...)
}
