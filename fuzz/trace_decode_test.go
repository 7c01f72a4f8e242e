//go:build jobtable_trace

package fuzz

import (
	"fmt"
	"strings"
)

// The thread roles of spec/JobTable.tla that a FuzzTrace input is made of,
// by the letter spec/trace.mjs names them with.
const (
	roleSubmitter = iota // s: Submit, n times
	roleRunner           // r: Start a queued job, TakeRequest, end it; n jobs
	roleTimer            // t: one Timeout on a slot
	rolePoller           // p: Snapshot, then Result, of a slot
	roleWaiter           // w: one Wait on a slot
	roleMisuser          // m: Start, TakeRequest (or skip it), Finish, of a slot
	roleKinds
)

var roleLetters = [roleKinds]string{"s", "r", "t", "p", "w", "m"}

// Bounds of one FuzzTrace input.
const (
	traceSlots      = 8 // jobs a slot can name: the first eight admitted (3 bits)
	traceMaxThreads = 8 // so that a release's who (3 bits) names any
	traceMaxCalls   = 4 // a submitter's submits, a runner's jobs (2 bits)
)

// traceThread is one thread of a FuzzTrace input.
type traceThread struct {
	role int
	// n: a submitter's submits, a runner's jobs (1 ... 4).
	n int
	// slot: the job a timer, poller, waiter or misuser calls on, by
	// admission order: slot 0 is the first job admitted.
	slot int
	// flag: a waiter's context has ended before it calls Wait; a misuser
	// leaves TakeRequest out.
	flag bool
	// outcome: how a runner ends its first job (0 Finish, 1 Fail, 2
	// Timeout); each next job the next one.
	outcome int
}

// traceSpec is a decoded FuzzTrace input.
type traceSpec struct {
	maxQueue     int // 1 ... 3
	maxCompleted int // 1 ... 3
	threads      []traceThread
	schedule     []release
}

// steps returns how many releases thread th's calls take: one per API
// call (a misuser's skip of TakeRequest counts as its call).
func (th traceThread) steps() int {
	switch th.role {
	case roleSubmitter:
		return th.n
	case roleRunner:
		return 3 * th.n
	case rolePoller:
		return 2
	case roleMisuser:
		return 3
	}
	return 1
}

// decodeTrace reads a FuzzTrace input:
//
//	byte 0: MaxQueue-1 (mod 3)
//	byte 1: MaxCompleted-1 (mod 3)
//	byte 2: threads-1 (mod 8)
//	per thread, one byte: the role (bits 0-2, mod 6), then for a submitter
//	        or a runner n-1 (bits 3-4), a runner's first outcome (bits
//	        5-6, mod 3); for the others the slot (bits 3-5) and the flag
//	        (bit 6)
//	then the schedule, as FuzzConcurrent's: one byte per release, who
//	        (bits 0-2, mod the threads), yields (bits 3-4), together (bit
//	        5), join (bit 7). A release of a thread with no call left goes
//	        to the next that has one; calls the schedule leaves unreleased
//	        go in turn at its end.
func decodeTrace(data []byte) traceSpec {
	in := &input{data: data}
	s := traceSpec{maxQueue: 1 + in.intn(3), maxCompleted: 1 + in.intn(3)}
	threads := 1 + in.intn(traceMaxThreads)
	total := 0
	for range threads {
		b := in.byte()
		th := traceThread{role: int(b&7) % roleKinds}
		switch th.role {
		case roleSubmitter, roleRunner:
			th.n = 1 + int(b>>3)&(traceMaxCalls-1)
			if th.role == roleRunner {
				th.outcome = int(b>>5&3) % 3
			}
		default:
			th.slot, th.flag = int(b>>3)&(traceSlots-1), b&0x40 != 0
		}
		s.threads = append(s.threads, th)
		total += th.steps()
	}
	for in.more() && len(s.schedule) < total {
		s.schedule = append(s.schedule, decodeRelease(in.byte()))
	}
	return s
}

// encode returns the input that decodeTrace decodes to s (s's fields must
// be within the decoder's ranges).
func (s traceSpec) encode() []byte {
	b := []byte{byte(s.maxQueue - 1), byte(s.maxCompleted - 1), byte(len(s.threads) - 1)}
	for _, th := range s.threads {
		c := byte(th.role)
		switch th.role {
		case roleSubmitter, roleRunner:
			c |= byte(th.n-1)<<3 | byte(th.outcome)<<5
		default:
			c |= byte(th.slot) << 3
			if th.flag {
				c |= 0x40
			}
		}
		b = append(b, c)
	}
	for _, r := range s.schedule {
		b = append(b, r.byte())
	}
	return b
}

// names returns each thread's role name as spec/trace.mjs reads it: the
// role's letter and its number among the threads of that role.
func (s traceSpec) names() []string {
	var seen [roleKinds]int
	names := make([]string, len(s.threads))
	for i, th := range s.threads {
		seen[th.role]++
		names[i] = fmt.Sprintf("%s%d", roleLetters[th.role], seen[th.role])
	}
	return names
}

func (s traceSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxQueue=%d MaxCompleted=%d\n", s.maxQueue, s.maxCompleted)
	for i, name := range s.names() {
		th := s.threads[i]
		fmt.Fprintf(&b, "  %s:", name)
		switch th.role {
		case roleSubmitter:
			fmt.Fprintf(&b, " %d submits", th.n)
		case roleRunner:
			fmt.Fprintf(&b, " %d jobs, first outcome %d", th.n, th.outcome)
		default:
			fmt.Fprintf(&b, " slot %d, flag %t", th.slot, th.flag)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  schedule: %v", s.schedule)
	return b.String()
}
