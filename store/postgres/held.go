package postgres

// The jobs a Store holds: those that a call of its own took, started or
// claimed for its caller (TakeRequest, Start and Claim returned them), and
// that no call of its own has tried to end since. Its keeper renews the
// leases of these alone (lease.go), not of every live job its replica
// owns, so a job whose runner is gone loses its lease as a dead replica's
// job does, and a reaper ends it (reap.go), this replica's own included:
// a job whose Claim or TakeRequest committed but whose reply was lost (its
// caller got an error and never ran it), and a job whose ends all failed
// (its caller gave up on it). A job is let go once an end tried on it
// here has a known outcome (it committed, or the job had ended or is
// gone), or once two ends in a row failed with their outcome unknown: a
// cancel's end that fails leaves the runner running the job, and the
// runner's own end, then its fallback, are the two tries after which its
// caller gives up.

// hold records that this Store's caller holds job id.
func (s *Store) hold(id string) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	s.holds++
	s.held[id] = s.holds
}

// endTried records an end tried on job id here: known says whether its
// outcome is known. The job is let go on a known outcome, or on the
// second unknown one since it was held.
func (s *Store) endTried(id string, known bool) {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	n, ok := s.held[id]
	switch {
	case !ok:
	case known || s.failedEnd[id] == n:
		delete(s.held, id)
		delete(s.failedEnd, id)
	default:
		s.failedEnd[id] = n
	}
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
			delete(s.failedEnd, id)
		}
	}
}
