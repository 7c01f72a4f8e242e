package postgres_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/ledger/ledgertype"
	"github.com/jobledger/jobledger/store/postgres"
)

// BenchmarkWakeup measures how long after a job's end a blocked Wait
// returns, with the waiter on another replica than the one that ends the
// job (the subject) and on the same one (the baseline), alternately in one
// run on one database. Each operation submits a job on replica a, starts
// a waiter on b or on a, lets it register and most likely read the job
// PENDING (see wakeOnce), then ends the job with Finish on a. Either way
// the waiter is woken by its own replica's listener, when PostgreSQL
// delivers the end's notification after the commit.
//
// It reports, for each side, the p50 and p99 of the time from Finish's
// return (the commit acknowledged to the replica that ended the job) to
// the waiter's return (wake-...), which is negative when the waiter
// returned first, and from Finish's call (end-to-wake-...), and the ratio
// of the p50s from the call (same over other: above 1 the other replica's
// waiter is faster).
func BenchmarkWakeup(b *testing.B) {
	dsn := newDatabase(b)
	cfg := ledger.Config{MaxQueue: 1 << 20, MaxCompleted: 1024}
	a := openNamed(b, dsn, cfg, "a")
	other := openNamed(b, dsn, cfg, "b")
	sameLat, otherLat := &wakeups{}, &wakeups{}
	benchcmp.Alternate(b, 8,
		func() error { return wakeOnce(a, other, otherLat) },
		func() error { return wakeOnce(a, a, sameLat) })
	for _, side := range []struct {
		name string
		w    *wakeups
	}{{"other", otherLat}, {"same", sameLat}} {
		p50, p99 := percentiles(side.w.fromReturn)
		b.ReportMetric(float64(p50.Nanoseconds()), side.name+"-wake-p50-ns")
		b.ReportMetric(float64(p99.Nanoseconds()), side.name+"-wake-p99-ns")
		p50, p99 = percentiles(side.w.fromCall)
		b.ReportMetric(float64(p50.Nanoseconds()), side.name+"-end-to-wake-p50-ns")
		b.ReportMetric(float64(p99.Nanoseconds()), side.name+"-end-to-wake-p99-ns")
	}
	same50, _ := percentiles(sameLat.fromCall)
	other50, _ := percentiles(otherLat.fromCall)
	b.ReportMetric(float64(same50)/float64(other50), "p50-ratio")
}

// openNamed opens a Store on dsn as replica name, closed when b ends.
func openNamed(b *testing.B, dsn string, cfg ledger.Config, name string) *postgres.Store {
	b.Helper()
	s, err := postgres.Open(ctx, dsn, cfg, postgres.Options{Replica: name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// wakeups holds the latencies of one side, from the benchmark's one
// goroutine.
type wakeups struct{ fromReturn, fromCall []time.Duration }

// maxYields bounds the wait for a waiter to register and read its job:
// far more than the few round trips that takes.
const maxYields = 1 << 22

// wakeOnce submits a job on ender, waits for it on waiter, ends it on
// ender and records when the waiter returned.
func wakeOnce(ender, waiter *postgres.Store, w *wakeups) error {
	id, _, err := ender.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
	if err != nil {
		return err
	}
	type woken struct {
		at   time.Time
		snap ledger.Snapshot
		err  error
	}
	done := make(chan woken, 1)
	go func() {
		snap, err := waiter.Wait(ctx, id)
		done <- woken{time.Now(), snap, err}
	}()
	for i := 0; waiter.Waiting() == 0; i++ {
		if i == maxYields {
			return fmt.Errorf("the waiter on job %s never registered", id)
		}
		runtime.Gosched()
	}
	// The waiter registered, then reads the job: one round trip, which
	// this one on the same replica's pool follows, so that the waiter is
	// most likely blocked before the end. If it is not, its read sees the
	// end and it returns as soon as a woken one would.
	if _, err := waiter.Snapshot(ctx, id); err != nil {
		return err
	}
	call := time.Now()
	if _, err := ender.Finish(ctx, id, []byte("res")); err != nil {
		return err
	}
	ret := time.Now()
	got := <-done
	if got.err != nil || got.snap.State != ledgertype.Done {
		return fmt.Errorf("wait on job %s: %v, %v", id, got.snap.State, got.err)
	}
	w.fromReturn = append(w.fromReturn, got.at.Sub(ret))
	w.fromCall = append(w.fromCall, got.at.Sub(call))
	return nil
}

// percentiles returns the p50 and p99 of d (nearest rank), sorting it.
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	rank := func(p int) time.Duration { return d[max(0, (len(d)*p+99)/100-1)] }
	return rank(50), rank(99)
}
