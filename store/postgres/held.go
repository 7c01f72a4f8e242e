package postgres

// The jobs a Store holds: those that a call of its own took, started or
// claimed for its caller (TakeRequest, Start and Claim returned them), and
// that no call of its own has tried to end since. Its keeper renews the
// leases of these alone (lease.go), not of every live job its replica
// owns, so a job whose runner is gone loses its lease as a dead replica's
// job does, and a reaper ends it (reap.go), this replica's own included:
// a job whose Claim or TakeRequest committed but whose reply was lost (its
// caller got an error and never ran it), and a job whose ends all failed
// (its caller gave up on it). A job is let go at the first end tried on
// it here, whatever the outcome: a caller whose end fails retries at once
// or not at all, and a retry within the lease still finds the job live.

// hold records that this Store's caller holds job id.
func (s *Store) hold(id string) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	s.holds++
	s.held[id] = s.holds
}

// letGo records that this Store's caller tried to end job id.
func (s *Store) letGo(id string) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	delete(s.held, id)
}

// heldNow is a copy of the held jobs, each with the number of its latest
// hold.
func (s *Store) heldNow() map[string]uint64 {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	m := make(map[string]uint64, len(s.held))
	for id, n := range s.held {
		m[id] = n
	}
	return m
}

// heldIDs are the ids of m, a heldNow.
func heldIDs(m map[string]uint64) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}

// forget lets go of the jobs of was, a heldNow, that are not in kept,
// unless held again since: a renewal found them ended, or another
// replica's, and their leases are no longer this Store's to renew.
func (s *Store) forget(was map[string]uint64, kept map[string]bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	for id, n := range was {
		if !kept[id] && s.held[id] == n {
			delete(s.held, id)
		}
	}
}
