package jobapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
)

// outcome is what a model run produced: a marshalled result or an error.
type outcome struct {
	res json.RawMessage
	err error
}

// acquire waits for a free worker, for a caller of execute; it returns
// ctx's error when ctx ends first.
func (e *executor) acquire(ctx context.Context) error { return e.workers.Acquire(ctx, 1) }

// execute runs the model on req on a worker the caller has acquired, and
// returns its outcome, or ok false when ctx ends first. The model runs in a
// goroutine of its own that releases the worker when the model returns, so a
// model that ignores its context keeps its worker but never holds up the
// job's terminal state. The caller must be inside enter.
func (e *executor) execute(ctx context.Context, req Request) (o outcome, ok bool) {
	done := make(chan outcome, 1)
	e.wg.Add(1) // the caller's own count keeps wg above zero
	go func() {
		defer e.wg.Done()
		defer e.workers.Release(1)
		e.running.Add(1)
		defer e.running.Add(-1)
		done <- e.runModel(ctx, req)
	}()
	select {
	case o := <-done:
		return o, true
	case <-ctx.Done():
		return outcome{}, false
	}
}

// runModel calls the model, turning a panic into an error wrapping
// ErrModelPanic, and marshals its result.
func (e *executor) runModel(ctx context.Context, req Request) (o outcome) {
	defer func() {
		if v := recover(); v != nil {
			e.log.Error("model panicked", "task_id", req.TaskID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			o = outcome{err: wireError(ErrModelPanic, fmt.Sprint(v))}
		}
	}()
	out, err := e.model.Run(ctx, req)
	if err != nil {
		if err.Error() == "" {
			err = errors.New("model error")
		}
		return outcome{err: err}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return outcome{err: fmt.Errorf("result is not JSON: %w", err)}
	}
	return outcome{res: data}
}
