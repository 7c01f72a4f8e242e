package postgres_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// BenchmarkLedgerRow measures how the one ledger row limits admissions
// and ends. An operation is one Submit and one Finish of that job (an
// admission and an end: the two transactions that lock the row), run by
// 1, 4, 16 and 64 clients at once (the subject) and by the same clients
// taking turns, one transaction pair at a time (the baseline), alternately
// in one run, on one store whose pool has a connection per client. ratio
// is the baseline's time over the subject's: what running the clients at
// once gains over running them one after another. It reports the subject's
// admissions+ends per second, and, from pg_stat_activity sampled every
// 5 ms while either side runs (so that the sampling loads both alike),
// the subject's mean number of the database's sessions in a
// transaction or a statement (active) and of those waiting for a lock: on
// the ledger row (lockwait-row: a row lock, wait events transactionid and
// tuple; no other row is wanted by two clients at once) and on the lock
// PostgreSQL takes at the commit of every transaction that sent a
// notification (lockwait-notify: wait event object), which every
// admission and end does. baseline-active is the baseline's mean number of
// active sessions, about one.
func BenchmarkLedgerRow(b *testing.B) {
	dsn := newDatabase(b)
	for _, clients := range []int{1, 4, 16, 64} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			s, err := postgres.Open(ctx, dsn, ledger.Config{MaxQueue: 1 << 20, MaxCompleted: 1024},
				postgres.Options{MaxConns: int32(clients)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			pair := func() error {
				id, err := s.Submit(ctx, "t", []byte("req"))
				if err == nil {
					_, err = s.Finish(ctx, id, []byte("res"))
				}
				return err
			}
			warmUp(b, clients, pair)
			smp := startSampler(b, dsn)
			var turns sync.Mutex
			r := benchcmp.AlternateParallel(b, clients, 8,
				func() error {
					smp.side.Store(sideSubject)
					return pair()
				},
				func() error {
					smp.side.Store(sideBaseline)
					turns.Lock()
					defer turns.Unlock()
					return pair()
				})
			subject, baseline := smp.stop(b)
			b.ReportMetric(2*float64(r.Ops)/r.Subject.Seconds(), "admissions+ends/s")
			b.ReportMetric(subject.active, "active")
			b.ReportMetric(subject.row, "lockwait-row")
			b.ReportMetric(subject.notify, "lockwait-notify")
			b.ReportMetric(baseline.active, "baseline-active")
		})
	}
}

// warmUp runs op twice on each of clients goroutines at once, so that the
// pool has opened its connections and each has prepared its statements
// before the timed runs.
func warmUp(b *testing.B, clients int, op func() error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			for range 2 {
				if err := op(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// sampleEvery is how often the sampler reads pg_stat_activity: each read
// is a query that takes the server's CPU, shared with what it measures.
const sampleEvery = 5 * time.Millisecond

// The sides a sample is counted for: the side whose operation began last
// (the two never run at once).
const (
	sideNone = iota
	sideSubject
	sideBaseline
)

// sampler reads pg_stat_activity on a connection of its own every
// sampleEvery, and counts each sample for the side that is running.
//
// side is atomic, stored by the operations; quit is closed once, by halt;
// samples and sums are written by the sampler's goroutine only and read
// after it closes done; err likewise.
type sampler struct {
	side    atomic.Int64
	quit    chan struct{}
	done    chan struct{}
	samples [3]int
	sums    [3]activity
	err     error
}

// activity is a count of sessions, or a mean of them per sample: in a
// transaction or a statement, and waiting for the ledger row or for the
// notification lock.
type activity struct{ active, row, notify float64 }

func startSampler(b *testing.B, dsn string) *sampler {
	b.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	smp := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(smp.done)
		defer conn.Close(ctx)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-smp.quit:
				return
			case <-tick.C:
			}
			side := smp.side.Load()
			if side == sideNone {
				continue
			}
			var a activity
			err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state <> 'idle'),
					count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')),
					count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'object')
				FROM pg_stat_activity
				WHERE datname = current_database() AND backend_type = 'client backend'
					AND pid <> pg_backend_pid()`).Scan(&a.active, &a.row, &a.notify)
			if err != nil {
				smp.err = err
				return
			}
			smp.samples[side]++
			sum := &smp.sums[side]
			sum.active += a.active
			sum.row += a.row
			sum.notify += a.notify
		}
	}()
	b.Cleanup(smp.halt)
	return smp
}

// halt ends the sampling, once.
func (smp *sampler) halt() {
	select {
	case <-smp.quit:
	default:
		close(smp.quit)
	}
	<-smp.done
}

// stop ends the sampling and returns the mean activity per sample of the
// subject and of the baseline; it fails b if a sample failed.
func (smp *sampler) stop(b *testing.B) (subject, baseline activity) {
	b.Helper()
	smp.halt()
	if smp.err != nil {
		b.Fatalf("sampling pg_stat_activity: %v", smp.err)
	}
	mean := func(side int) activity {
		n := float64(max(1, smp.samples[side]))
		s := smp.sums[side]
		return activity{s.active / n, s.row / n, s.notify / n}
	}
	return mean(sideSubject), mean(sideBaseline)
}
