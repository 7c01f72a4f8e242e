package jobtable_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobtable"
)

// A job's whole life: admitted, run by an owner, waited for and read.
func Example() {
	t, err := jobtable.New[string, int](jobtable.Config{MaxQueue: 16})
	if err != nil {
		panic(err)
	}
	id, err := t.Submit("task-1", "hello")
	if err != nil {
		panic(err)
	}

	done := make(chan struct{})
	go func() { // the runner
		defer close(done)
		req, _ := t.TakeRequest(id)
		_, _ = t.Start(id)
		_, _ = t.Finish(id, len(req))
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := t.Wait(ctx, id)
	<-done
	fmt.Println(snap.State, snap.TaskID, err)

	res, _, err := t.Result(id)
	fmt.Println(res, err)
	// Output:
	// DONE task-1 <nil>
	// 5 <nil>
}

// Admission is bounded: beyond MaxQueue live jobs Submit refuses, until a
// job ends.
func ExampleTable_Submit() {
	t, _ := jobtable.New[string, string](jobtable.Config{MaxQueue: 1})
	first, _ := t.Submit("a", "payload")
	_, err := t.Submit("b", "payload")
	fmt.Println(errors.Is(err, jobtable.ErrQueueFull))

	_, _ = t.Fail(first, errors.New("gave up"))
	_, err = t.Submit("b", "payload")
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

// Terminal states are absorbing: the first terminal call wins and later
// ones change nothing. Each call returns the job's snapshot: the one its
// transition produced, or, when refused, the terminal one that stands.
func ExampleTable_Finish() {
	t, _ := jobtable.New[string, string](jobtable.Config{MaxQueue: 1})
	id, _ := t.Submit("a", "payload")
	snap, err := t.Timeout(id, errors.New("deadline passed"))
	fmt.Println(snap.State, err)
	snap, err = t.Finish(id, "too late")
	fmt.Println(snap.State, snap.Err, err)
	fmt.Println(t.Depth())
	// Output:
	// TIMEOUT <nil>
	// TIMEOUT deadline passed ledger: job already terminal
	// 0
}

// Wait returns at once with the context's error and the latest snapshot when
// the context ends before the job does.
func ExampleTable_Wait() {
	t, _ := jobtable.New[string, string](jobtable.Config{MaxQueue: 1})
	id, _ := t.Submit("a", "payload")
	_, _ = t.Start(id)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snap, err := t.Wait(ctx, id)
	fmt.Println(snap.State, err)
	// Output:
	// RUNNING context canceled
}

// Retention keeps finished jobs for JobTTL after completion; the next Submit
// evicts what has expired.
func ExampleConfig_retention() {
	clock := fakeclock.New()
	t, _ := jobtable.New[string, string](jobtable.Config{
		MaxQueue: 4, JobTTL: time.Minute, Now: clock.Now,
	})
	id, _ := t.Submit("a", "payload")
	_, _ = t.Finish(id, "result")

	clock.Advance(time.Minute)
	_, _, err := t.Result(id)
	fmt.Println(err) // still held: eviction happens on Submit

	_, _ = t.Submit("b", "payload")
	_, _, err = t.Result(id)
	fmt.Println(err)
	// Output:
	// <nil>
	// ledger: job not found
}
