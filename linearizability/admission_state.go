package linearizability

import "slices"

// stateSet is a set of sweep states that keeps their order of insertion,
// so that a loop over list may add to it as it goes. Small sets, the usual
// case, are searched linearly; a map indexes larger ones.
type stateSet struct {
	list []dstate
	idx  map[dstate]struct{}
}

// linearUpTo is the size up to which a stateSet searches linearly.
const linearUpTo = 16

func (s *stateSet) reset() {
	s.list = s.list[:0]
	if s.idx != nil {
		clear(s.idx)
	}
}

// add adds x unless it is there, and reports whether it was added.
func (s *stateSet) add(x dstate) bool {
	if len(s.list) < linearUpTo {
		if slices.Contains(s.list, x) {
			return false
		}
		s.list = append(s.list, x)
		return true
	}
	if s.idx == nil {
		s.idx = make(map[dstate]struct{}, 2*linearUpTo)
	}
	if len(s.idx) < len(s.list) { // index the states added linearly
		for _, y := range s.list {
			s.idx[y] = struct{}{}
		}
	}
	if _, ok := s.idx[x]; ok {
		return false
	}
	s.idx[x] = struct{}{}
	s.list = append(s.list, x)
	return true
}

// rehash removes the duplicates that editing list in place made. It
// compacts list in place: each state is written at or before where it was
// read.
func (s *stateSet) rehash() {
	old := s.list
	s.reset()
	for _, x := range old {
		s.add(x)
	}
}

// A live set is a string of job numbers, 4 bytes each, ascending, so that
// a state stays a comparable value.

func liveAt(live string, i int) int32 {
	return int32(uint32(live[i]) | uint32(live[i+1])<<8 | uint32(live[i+2])<<16 | uint32(live[i+3])<<24)
}

func liveFind(live string, job int32) (int, bool) {
	for i := 0; i < len(live); i += 4 {
		switch j := liveAt(live, i); {
		case j == job:
			return i, true
		case j > job:
			return i, false
		}
	}
	return len(live), false
}

func liveHas(live string, job int32) bool {
	_, ok := liveFind(live, job)
	return ok
}

func liveAdd(live string, job int32) string {
	i, ok := liveFind(live, job)
	if ok {
		return live
	}
	b := [4]byte{byte(job), byte(job >> 8), byte(job >> 16), byte(job >> 24)}
	return live[:i] + string(b[:]) + live[i:]
}

func liveRemove(live string, job int32) string {
	i, ok := liveFind(live, job)
	if !ok {
		return live
	}
	return live[:i] + live[i+4:]
}
