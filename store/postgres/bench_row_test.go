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
// admission and an end: the two transactions that lock the row), on one
// store whose pool has a connection per client, run three ways alternately
// in one run: by 1, 4, 16 and 64 clients taking turns, one pair at a time
// (turns, the baseline); by the same clients at once (row); and, at once,
// the same transactions on a striped ledger of a stripe per client
// (stripes, see stripes), the shape of the design that would lift the
// row's limit. NAME-ratio is the baseline's time over that side's: what
// running the clients at once gains over running them in turns; and
// stripes-over-row is row time over stripes time. It reports each side's
// admissions+ends per second, and, from pg_stat_activity sampled every
// 5 ms while any side runs, each side's mean number of the database's
// sessions in a transaction or a statement (NAME-active) and of those
// waiting for a lock: for a row (NAME-lockwait-row: wait events
// transactionid and tuple; the only row two of these transactions want at
// once is the ledger row, or a stripe's) and for the lock PostgreSQL takes
// at the commit of every transaction that sent a notification
// (NAME-lockwait-notify: wait event object), which every admission and
// end does.
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
				id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "t"}, []byte("req"))
				if err == nil {
					_, err = s.Finish(ctx, id, []byte("res"))
				}
				return err
			}
			striped := newStripes(b, dsn, clients, clients)
			warmUp(b, clients, pair)
			warmUp(b, clients, striped.pair)
			smp := startSampler(b, dsn)
			var turns sync.Mutex
			sides := []benchcmp.Side{
				{Name: "turns", Op: func() error {
					turns.Lock()
					defer turns.Unlock()
					return pair()
				}},
				{Name: "row", Op: pair},
				{Name: "stripes", Op: striped.pair},
			}
			for i := range sides {
				op := sides[i].Op
				sides[i].Op = func() error {
					smp.side.Store(int64(i) + 1)
					return op()
				}
			}
			ops, took := benchcmp.AlternateSides(b, clients, 8, sides...)
			seen := smp.stop(b)
			for i, side := range sides {
				if i > 0 {
					b.ReportMetric(2*float64(ops)/took[i].Seconds(), side.Name+"-admissions+ends/s")
					b.ReportMetric(seen[i].row, side.Name+"-lockwait-row")
					b.ReportMetric(seen[i].notify, side.Name+"-lockwait-notify")
				}
				b.ReportMetric(seen[i].active, side.Name+"-active")
			}
			b.ReportMetric(float64(took[1])/float64(took[2]), "stripes-over-row")
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

// samplerSides is how many sides a sampler tells apart.
const samplerSides = 3

// sampler reads pg_stat_activity on a connection of its own every
// sampleEvery, and counts each sample for the side whose operation began
// last (the sides never run at once).
//
// side is atomic, stored by the operations (the side's index plus one;
// zero before any); quit is closed once, by halt; quit is closed once, by halt;
// samples and sums are written by the sampler's goroutine only and read
// after it closes done; err likewise.
type sampler struct {
	side    atomic.Int64
	quit    chan struct{}
	done    chan struct{}
	samples [samplerSides + 1]int
	sums    [samplerSides + 1]activity
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
			if side == 0 {
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

// stop ends the sampling and returns the mean activity per sample of each
// side, by index; it fails b if a sample failed.
func (smp *sampler) stop(b *testing.B) [samplerSides]activity {
	b.Helper()
	smp.halt()
	if smp.err != nil {
		b.Fatalf("sampling pg_stat_activity: %v", smp.err)
	}
	var means [samplerSides]activity
	for i := range means {
		n := float64(max(1, smp.samples[i+1]))
		s := smp.sums[i+1]
		means[i] = activity{s.active / n, s.row / n, s.notify / n}
	}
	return means
}
