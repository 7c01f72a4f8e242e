package jobtable_test

import (
	"context"
	crand "crypto/rand"
	"runtime"
	"slices"
	"testing"
	"time"

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
	if err := l.Start(id); err != nil {
		return err
	}
	if err := l.Finish(id, "r"); err != nil {
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
// job's whole life, serially and from GOMAXPROCS goroutines. Run it with
// -cpu=1,2,N to see how each scales.
func BenchmarkLifecycle(b *testing.B) {
	ledgers := []struct {
		name string
		make func() ledger
	}{
		{"table", func() ledger {
			t, err := jobtable.New[req, string](benchConfig())
			if err != nil {
				b.Fatal(err)
			}
			return t
		}},
		{"global-mutex", func() ledger { return newGlobalLedger(benchConfig()) }},
	}
	for _, l := range ledgers {
		b.Run(l.name+"/serial", func(b *testing.B) {
			led := l.make()
			b.ReportAllocs()
			for b.Loop() {
				if err := lifecycle(led); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(l.name+"/parallel", func(b *testing.B) {
			led := l.make()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := lifecycle(led); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// reportLatency reports the mean (as ns/op) and the 50th and 99th
// percentiles of the given latencies.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/wake")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkWakeup measures the time from a terminal transition to the return
// of a Wait blocked on that job, against the floor: a goroutine blocked on
// a bare channel, woken by closing it.
func BenchmarkWakeup(b *testing.B) {
	b.Run("table", func(b *testing.B) {
		tab, err := jobtable.New[req, string](jobtable.Config{MaxQueue: 1, MaxCompleted: 1, JobTTL: -1})
		if err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		woke := make(chan time.Time)
		for range b.N {
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
			if err := tab.Finish(id, "r"); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, (<-woke).Sub(start))
		}
		reportLatency(b, lat)
	})
	b.Run("channel-floor", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		woke := make(chan time.Time)
		for range b.N {
			ch, ready := make(chan struct{}), make(chan struct{})
			go func() {
				close(ready)
				<-ch
				woke <- time.Now()
			}()
			<-ready
			runtime.Gosched() // as AwaitWaiter yields at least once
			start := time.Now()
			close(ch)
			lat = append(lat, (<-woke).Sub(start))
		}
		reportLatency(b, lat)
	})
}

// BenchmarkSubmitRetained measures Submit (with the Finish that makes room
// for the next) on a table that retains 100,000 finished jobs, each Submit
// evicting the oldest, against a table that retains one.
func BenchmarkSubmitRetained(b *testing.B) {
	for _, retained := range []int{1, 100_000} {
		b.Run(map[int]string{1: "empty", 100_000: "retained-100k"}[retained], func(b *testing.B) {
			cfg := benchConfig()
			cfg.MaxCompleted = retained
			tab, err := jobtable.New[req, string](cfg)
			if err != nil {
				b.Fatal(err)
			}
			for range retained + 1 {
				id, _ := tab.Submit("task", req{})
				_ = tab.Finish(id, "r")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				id, err := tab.Submit("task", req{})
				if err != nil {
					b.Fatal(err)
				}
				_ = tab.Finish(id, "r")
			}
			b.StopTimer()
			// The last Finish retains one more until the next Submit.
			if st := tab.Stats(); st.Retained != retained+1 {
				b.Fatalf("retained %d, want %d", st.Retained, retained+1)
			}
		})
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
			_ = tab.Finish(id, struct{}{})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perJob = float64(after.HeapAlloc-before.HeapAlloc) / jobs
		runtime.KeepAlive(tab)
	}
	b.ReportMetric(perJob, "B/job")
}
