package fuzz

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/model"
)

// stillClock is a jobapi.Clock whose time never moves: deadlines never
// fire, so a run's outcome depends on its input alone. AfterFunc only
// records that a timer exists; no goroutine is started.
type stillClock struct {
	*fakeclock.Clock
	mu      sync.Mutex
	stopped map[int]bool
	next    int
}

func newStillClock() *stillClock {
	return &stillClock{Clock: fakeclock.New(), stopped: make(map[int]bool)}
}

func (c *stillClock) AfterFunc(_ time.Duration, _ func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next++
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := c.stopped[id]
		c.stopped[id] = true
		return !was
	}
}

// pending returns the number of timers never stopped: with a clock that
// never fires, the timers a drained server left armed.
func (c *stillClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next - len(c.stopped)
}

// blockTaskID marks the jobs that the setup of FuzzHTTP keeps running: its
// model blocks on them until their context ends. It holds random bytes so
// that no input can name it.
var blockTaskID = "block-" + rand.Text()

// errNoSleep ends the context of every echo run: the fuzz model answers at
// once instead of sleeping for sleep_ms.
var errNoSleep = errors.New("fuzz model does not sleep")

// fuzzModel is model.Echo (its request validation and its answers) except
// that it never sleeps, and that it blocks, until its context ends, on the
// jobs whose task id is blockTaskID.
type fuzzModel struct{}

func (fuzzModel) ValidateRequest(req jobapi.Request) error { return model.Echo{}.ValidateRequest(req) }

func (fuzzModel) Run(ctx context.Context, req jobapi.Request) (any, error) {
	if req.TaskID == blockTaskID {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	nosleep, cancel := context.WithCancelCause(ctx)
	cancel(errNoSleep)
	return model.Echo{}.Run(nosleep, req)
}

// jobBody is a valid POST /jobs body for task.
func jobBody(task string) []byte {
	b, _ := json.Marshal(map[string]any{"task_id": task, "params": map[string]any{"k": 1}})
	return b
}
