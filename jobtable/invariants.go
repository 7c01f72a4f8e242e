package jobtable

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/jobledger/jobledger/internal/invariant"
)

func init() {
	invariant.Register(func(table any) error {
		c, ok := table.(interface{ checkInvariants() error })
		if !ok {
			return invariant.ErrNoChecker
		}
		return c.checkInvariants()
	})
}

// checkInvariants states the table's contract as code. Each clause carries
// the name of the invariant of spec/JobTable.tla that it mirrors. It takes
// the table lock, which makes it the index's one writer and so lets it see
// the whole index at one moment, and then each job's lock (table, then
// job), so it may run at any time; DepthInv is exact only when no Submit is between its CAS and
// its insertion, so callers run it when no operation is in flight.
func (t *Table[Req, Res]) checkInvariants() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	fail := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}

	depth := int(t.depth.Load())
	if limit := max(t.cfg.MaxQueue, 0); depth < 0 || depth > limit {
		fail("DepthBoundInv", "depth %d outside [0, %d]", depth, limit)
	}

	// Walk the retention list: terminal jobs of the map, each once, in
	// completion order.
	if err := t.retained.check(); err != nil {
		fail("RetentionListInv", "%v", err)
	}
	onList := make(map[*job[Req, Res]]bool, t.retained.len())
	var prev *job[Req, Res]
	for j := range t.retained.all() {
		if onList[j] {
			fail("RetentionListInv", "job %s: listed twice", j.id)
			continue
		}
		onList[j] = true
		if t.jobs.lookup(j.id) != j {
			fail("RetentionListInv", "job %s: listed but not in the map", j.id)
		}
		if !j.loadState().Terminal() {
			fail("NoEvictNonTerminalInv", "job %s: %s job on the retention list", j.id, j.loadState())
		}
		if prev != nil && completedAt(j).Before(completedAt(prev)) {
			fail("RetentionListInv", "job %s completed before job %s, listed after it", j.id, prev.id)
		}
		prev = j
	}

	for _, err := range t.jobs.check() {
		fail("TypeInv", "%v", err)
	}

	live := 0
	for j := range t.jobs.all() {
		id := j.id
		if t.jobs.lookup(id) != j {
			fail("TypeInv", "job %s held but not found under its id", id)
		}
		j.mu.Lock()
		s := j.loadState()
		if !s.Terminal() {
			live++
		}
		if s < Pending || s > TimedOut {
			fail("TypeInv", "job %s: state %d is no State", id, int32(s))
		}
		if s.Terminal() != onList[j] {
			fail("RetentionListInv", "job %s: %s, listed = %t", id, s, onList[j])
		}
		if s.Terminal() == j.completedAt.IsZero() {
			fail("PayloadConsistencyInv", "job %s: %s with completedAt %v", id, s, j.completedAt)
		}
		if (s == Failed || s == TimedOut) != (j.err != nil) {
			fail("PayloadConsistencyInv", "job %s: %s with error %v", id, s, j.err)
		}
		if s == Running && j.startedAt.IsZero() {
			fail("PayloadConsistencyInv", "job %s: RUNNING without startedAt", id)
		}
		if !j.startedAt.IsZero() && j.startedAt.Before(j.createdAt) {
			fail("TimestampOrderInv", "job %s: started %v before created %v", id, j.startedAt, j.createdAt)
		}
		if !j.completedAt.IsZero() && j.completedAt.Before(j.createdAt) {
			fail("TimestampOrderInv", "job %s: completed %v before created %v", id, j.completedAt, j.createdAt)
		}
		if !j.startedAt.IsZero() && !j.completedAt.IsZero() && j.completedAt.Before(j.startedAt) {
			fail("TimestampOrderInv", "job %s: completed %v before started %v", id, j.completedAt, j.startedAt)
		}
		if s.Terminal() && !j.reqReleased {
			fail("TerminalReleasesRequestInv", "job %s: %s still holds its request", id, s)
		}
		if j.reqReleased && !reflect.ValueOf(&j.req).Elem().IsZero() {
			fail("RequestReleasedInv", "job %s: request released but still referenced", id)
		}
		if j.done != nil {
			closed := false
			select {
			case <-j.done:
				closed = true
			default:
			}
			if closed != s.Terminal() {
				fail("NoLostWakeupInv", "job %s: %s with wakeup closed = %t", id, s, closed)
			}
		}
		j.mu.Unlock()
	}
	if depth != live {
		fail("DepthInv", "depth %d, non-terminal jobs %d", depth, live)
	}
	return errors.Join(errs...)
}

// completedAt reads j.completedAt under j.mu.
func completedAt[Req, Res any](j *job[Req, Res]) time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.completedAt
}
