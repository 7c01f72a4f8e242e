package fuzz

import "runtime"

// release is one step of the schedule: it lets the next step of goroutine
// who run, yields the processor yields times, and if join is set waits
// until every released step of a joined goroutine has returned before the
// next release. A release with together set does not start its step at
// once: the step starts with the next release's, at the same instant (they
// wait on one channel, which is then closed), so that the two really
// overlap.
type release struct {
	who, yields    int
	join, together bool
}

// decodeRelease reads one schedule byte: who (bits 0-2), yields (bits
// 3-4), together (bit 5), join (bit 7).
func decodeRelease(b byte) release {
	return release{who: int(b & 7), yields: int(b >> 3 & 3), together: b&0x20 != 0, join: b&0x80 != 0}
}

// byte returns the schedule byte that decodeRelease reads as r (r's
// fields must be within its ranges).
func (r release) byte() byte {
	c := byte(r.who) | byte(r.yields)<<3
	if r.together {
		c |= 0x20
	}
	if r.join {
		c |= 0x80
	}
	return c
}

// scheduler releases the steps of a fixed set of goroutines, one step per
// release, in the order a schedule gives: FuzzConcurrent and FuzzTrace
// share it, so that a schedule byte means the same to both. Each goroutine
// registered with add waits for each of its steps with wait; a joined one
// reports each step's end with stepDone, so that a join can wait for it (a
// goroutine that may block for good, a waiter, is not joined).
//
// Only the goroutine that calls add and run touches the fields; the
// goroutines it releases touch only their gate and done.
type scheduler struct {
	gates       []chan (<-chan struct{}) // per goroutine: its releases
	left        []int                    // per goroutine: steps not yet released
	joined      []bool                   // per goroutine: its steps are joined
	done        chan struct{}            // a joined step returned; made by run
	outstanding int                      // joined steps released and not yet joined
	group       chan struct{}            // the open group's start channel; nil when none
	inGroup     []bool                   // per goroutine: it waits in the open group
}

// add registers a goroutine with steps steps and returns its number, the
// who of a release. Every add comes before run.
func (s *scheduler) add(steps int, joined bool) int {
	s.gates = append(s.gates, make(chan (<-chan struct{})))
	s.left = append(s.left, steps)
	s.joined = append(s.joined, joined)
	s.inGroup = append(s.inGroup, false)
	return len(s.gates) - 1
}

// setup makes the channel joined steps report on, with room for every
// one of them, so that stepDone never blocks. It runs before the
// goroutines start.
func (s *scheduler) setup() {
	n := 0
	for who, steps := range s.left {
		if s.joined[who] {
			n += steps
		}
	}
	s.done = make(chan struct{}, n)
}

// wait blocks goroutine who until its next step is released and its group
// fires.
func (s *scheduler) wait(who int) { <-<-s.gates[who] }

// stepDone reports that a step of joined goroutine who returned.
func (s *scheduler) stepDone() { s.done <- struct{}{} }

// fire starts the open group's steps.
func (s *scheduler) fire() {
	if s.group != nil {
		close(s.group)
		s.group = nil
		clear(s.inGroup)
	}
}

// join waits until every joined step released so far has returned.
func (s *scheduler) join() {
	for ; s.outstanding > 0; s.outstanding-- {
		<-s.done
	}
}

// releaseOne releases the next step of goroutine who, or, if it has none
// left, of the next goroutine that has one. Unless together is set, the
// open group fires at once.
func (s *scheduler) releaseOne(who int, together bool) {
	for range len(s.gates) {
		if s.left[who] > 0 {
			break
		}
		who = (who + 1) % len(s.gates)
	}
	if s.left[who] == 0 {
		return // every step is released
	}
	if s.inGroup[who] {
		s.fire() // it waits in the open group: start that first
	}
	if s.group == nil {
		s.group = make(chan struct{})
	}
	s.left[who]--
	s.inGroup[who] = true
	s.gates[who] <- s.group
	if s.joined[who] {
		s.outstanding++
	}
	if !together {
		s.fire()
	}
}

// run releases the schedule, then every step it left unreleased, each
// goroutine's in turn, and returns once every joined step has returned.
func (s *scheduler) run(schedule []release) {
	if len(s.gates) == 0 {
		return
	}
	for _, r := range schedule {
		s.releaseOne(r.who%len(s.gates), r.together)
		for range r.yields {
			runtime.Gosched()
		}
		if r.join {
			s.fire()
			s.join()
		}
	}
	for who := range s.gates {
		for s.left[who] > 0 {
			s.releaseOne(who, false)
		}
	}
	s.fire()
	s.join()
}
