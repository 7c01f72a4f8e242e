package jobtable_test

import (
	crand "crypto/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobtable"
)

// BenchmarkLifecycleCosts counts what one job's whole life (Submit,
// TakeRequest, Start, Finish, Result) costs the table beyond its locks:
// reads of the clock, ids generated, and heap allocations and bytes
// (-benchmem), with the table's default id source and a counting clock.
// Every one is per job and none depends on the number of jobs held.
func BenchmarkLifecycleCosts(b *testing.B) {
	var clockReads, ids atomic.Int64
	cfg := benchConfig()
	cfg.Now = func() time.Time { clockReads.Add(1); return time.Now() }
	cfg.NewID = func() string { ids.Add(1); return jobtable.DefaultNewID() }
	tab, err := jobtable.New[req, string](cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := lifecycle(tab); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(clockReads.Load())/float64(b.N), "clock-reads/op")
	b.ReportMetric(float64(ids.Load())/float64(b.N), "ids/op")
}

// BenchmarkNewID compares the table's default id source (128 bits from
// crypto/rand, read in batches) with crypto/rand.Text (130 bits, one read
// per id), the source it replaced. "ratio" is Text's time / the default's.
func BenchmarkNewID(b *testing.B) {
	var sink string
	b.ReportAllocs()
	benchcmp.AlternateParallel(b, 0, 64,
		func() error { sink = jobtable.DefaultNewID(); return nil },
		func() error { sink = crand.Text(); return nil })
	_ = sink
}
