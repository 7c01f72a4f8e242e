package ledger_test

import (
	"context"
	crand "crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobtable"
	"github.com/jobledger/jobledger/ledger"
)

// benchConfig admits everything a benchmark submits and retains a bounded
// number of finished jobs, as jobtable's lifecycle benchmark does.
func benchConfig() ledger.Config {
	return ledger.Config{MaxQueue: 1 << 20, JobTTL: -1, MaxCompleted: 1 << 16, Now: time.Now, NewID: crand.Text}
}

var errLifecycle = errors.New("lifecycle: wrong result")

// lifecycle is one job's whole life through the contract: Submit,
// TakeRequest, Start, Finish, Result.
func lifecycle(ctx context.Context, l ledger.Ledger[string, string]) error {
	id, _, err := l.Submit(ctx, ledger.Submission{TaskID: "task"}, "p")
	if err != nil {
		return err
	}
	if _, err := l.TakeRequest(ctx, id); err != nil {
		return err
	}
	if _, err := l.Start(ctx, id); err != nil {
		return err
	}
	if _, err := l.Finish(ctx, id, "r"); err != nil {
		return err
	}
	res, _, err := l.Result(ctx, id)
	if err == nil && res != "r" {
		err = errLifecycle
	}
	return err
}

// direct is the same life on the table itself, with no interface between.
func direct(t *jobtable.Table[string, string]) error {
	id, err := t.Submit("task", "p")
	if err != nil {
		return err
	}
	if _, err := t.TakeRequest(id); err != nil {
		return err
	}
	if _, err := t.Start(id); err != nil {
		return err
	}
	if _, err := t.Finish(id, "r"); err != nil {
		return err
	}
	res, _, err := t.Result(id)
	if err == nil && res != "r" {
		err = errLifecycle
	}
	return err
}

// BenchmarkMemoryLifecycle compares a job's whole life through the
// contract (ledger.Memory, called through the Ledger interface) with the
// same life on a jobtable.Table called directly, serially and from
// GOMAXPROCS goroutines. The two alternate within one run; "ratio" is
// table time / contract time, so near 1 the contract costs nothing and
// below 1 it costs that fraction (docs/performance.md).
func BenchmarkMemoryLifecycle(b *testing.B) {
	ctx := context.Background()
	open := func() (ledger.Ledger[string, string], *jobtable.Table[string, string]) {
		m, err := ledger.NewMemory[string, string](benchConfig())
		if err != nil {
			b.Fatal(err)
		}
		t, err := jobtable.New[string, string](benchConfig())
		if err != nil {
			b.Fatal(err)
		}
		return m, t
	}
	b.Run("serial", func(b *testing.B) {
		m, t := open()
		benchcmp.Alternate(b, 64,
			func() error { return lifecycle(ctx, m) },
			func() error { return direct(t) })
	})
	b.Run("parallel", func(b *testing.B) {
		m, t := open()
		benchcmp.AlternateParallel(b, 0, 64,
			func() error { return lifecycle(ctx, m) },
			func() error { return direct(t) })
	})
}
