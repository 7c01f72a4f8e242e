package jobtable_test

import (
	"context"
	crand "crypto/rand"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobtable"
)

// benchConfig admits everything a benchmark submits and retains a bounded
// number of finished jobs, so both ledgers evict as they go.
func benchConfig() jobtable.Config {
	return jobtable.Config{
		MaxQueue: 1 << 20, JobTTL: -1, MaxCompleted: 1 << 16,
		Now: time.Now, NewID: crand.Text,
	}
}

// lifecycle runs one job's whole life: Submit, TakeRequest, Start, Finish,
// Result.
func lifecycle(l ledger) error {
	id, err := l.Submit("task", req{payload: "p"})
	if err != nil {
		return err
	}
	if _, err := l.TakeRequest(id); err != nil {
		return err
	}
	if _, err := l.Start(id); err != nil {
		return err
	}
	if _, err := l.Finish(id, "r"); err != nil {
		return err
	}
	res, _, err := l.Result(id)
	if err != nil {
		return err
	}
	if res != "r" {
		return errLifecycle
	}
	return nil
}

// BenchmarkLifecycle compares the table with the global-mutex baseline on a
// job's whole life, serially and from GOMAXPROCS goroutines at once. The two
// alternate within one run; "ratio" is baseline time / table time, so above
// 1 the table is faster. Run it with -cpu=1,2,N to see how each scales.
func BenchmarkLifecycle(b *testing.B) {
	newTable := func() ledger {
		t, err := jobtable.New[req, string](benchConfig())
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	b.Run("serial", func(b *testing.B) {
		tab, base := newTable(), newGlobalLedger(benchConfig())
		benchcmp.Alternate(b, 64,
			func() error { return lifecycle(tab) },
			func() error { return lifecycle(base) })
	})
	b.Run("parallel", func(b *testing.B) {
		tab, base := newTable(), newGlobalLedger(benchConfig())
		benchcmp.AlternateParallel(b, 0, 64,
			func() error { return lifecycle(tab) },
			func() error { return lifecycle(base) })
	})
}

// latencies summarises wakeup latencies.
type latencies []time.Duration

func (l latencies) report(b *testing.B, name string) (p50, p99 float64) {
	slices.Sort(l)
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	p50 = float64(l[len(l)/2].Nanoseconds())
	p99 = float64(l[len(l)*99/100].Nanoseconds())
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(l)), name+"-mean-ns")
	b.ReportMetric(p50, name+"-p50-ns")
	b.ReportMetric(p99, name+"-p99-ns")
	return p50, p99
}

// BenchmarkWakeup measures the time from a terminal transition to the return
// of a Wait blocked on that job, against the floor: a goroutine blocked on a
// bare channel, woken by closing it. The two alternate, one wakeup each,
// the table first in even iterations and the floor first in odd ones (the
// order benchcmp uses, which cannot take latencies: see its order.go), so
// that neither always runs after the other and pays for what it leaves
// behind. "p50-ratio" and "p99-ratio" are table latency / floor latency.
func BenchmarkWakeup(b *testing.B) {
	tab, err := jobtable.New[req, string](jobtable.Config{MaxQueue: 1, MaxCompleted: 1, JobTTL: -1})
	if err != nil {
		b.Fatal(err)
	}
	woke := make(chan time.Time)
	table := func() time.Duration {
		id, err := tab.Submit("task", req{})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			_, _ = tab.Wait(context.Background(), id)
			woke <- time.Now()
		}()
		jobtable.AwaitWaiter(b, tab, id) // blocked, not about to look
		start := time.Now()
		if _, err := tab.Finish(id, "r"); err != nil {
			b.Fatal(err)
		}
		return (<-woke).Sub(start)
	}
	floor := func() time.Duration {
		ch := make(chan struct{})
		var blocked atomic.Bool
		go func() {
			blocked.Store(true) // as Wait takes the wakeup channel
			<-ch
			woke <- time.Now()
		}()
		// As AwaitWaiter does: yield until the waiter is about to block.
		for i := 0; !blocked.Load(); i++ {
			if i == 1_000_000 {
				b.Fatal("the floor's waiter never ran")
			}
			runtime.Gosched()
		}
		start := time.Now()
		close(ch)
		return (<-woke).Sub(start)
	}
	tl, fl := make(latencies, 0, b.N), make(latencies, 0, b.N)
	for i := range b.N {
		if i%2 == 0 {
			tl = append(tl, table())
			fl = append(fl, floor())
		} else {
			fl = append(fl, floor())
			tl = append(tl, table())
		}
	}
	b.ReportMetric(0, "ns/op")
	t50, t99 := tl.report(b, "table")
	f50, f99 := fl.report(b, "floor")
	b.ReportMetric(t50/f50, "p50-ratio")
	b.ReportMetric(t99/f99, "p99-ratio")
}

// BenchmarkSubmitRetained measures Submit (with the Finish that makes room
// for the next) on a table that retains 100,000 finished jobs, each Submit
// evicting the oldest, against a table that retains one. The two alternate;
// "ratio" is empty-table time / retained-table time, so 0.5 would mean the
// retained table is twice as slow.
func BenchmarkSubmitRetained(b *testing.B) {
	fill := func(retained int) *table {
		cfg := benchConfig()
		cfg.MaxCompleted = retained
		tab, err := jobtable.New[req, string](cfg)
		if err != nil {
			b.Fatal(err)
		}
		for range retained + 1 {
			id, _ := tab.Submit("task", req{})
			_, _ = tab.Finish(id, "r")
		}
		return tab
	}
	submit := func(tab *table) func() error {
		return func() error {
			id, err := tab.Submit("task", req{})
			if err != nil {
				return err
			}
			_, err = tab.Finish(id, "r")
			return err
		}
	}
	full, empty := fill(100_000), fill(1)
	benchcmp.Alternate(b, 64, submit(full), submit(empty))
	// The last Finish retains one more until the next Submit.
	if st := full.Stats(); st.Retained != 100_001 {
		b.Fatalf("retained %d, want 100001", st.Retained)
	}
}

// BenchmarkRetainedJobMemory reports the heap a retained finished job costs
// beyond its payload (here empty), id and bookkeeping included.
func BenchmarkRetainedJobMemory(b *testing.B) {
	const jobs = 10_000
	var perJob float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tab, err := jobtable.New[struct{}, struct{}](jobtable.Config{
			MaxQueue: jobs, JobTTL: -1, MaxCompleted: -1,
		})
		if err != nil {
			b.Fatal(err)
		}
		for range jobs {
			id, _ := tab.Submit("", struct{}{})
			_, _ = tab.Finish(id, struct{}{})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perJob = float64(after.HeapAlloc-before.HeapAlloc) / jobs
		runtime.KeepAlive(tab)
	}
	b.ReportMetric(perJob, "B/job")
}
