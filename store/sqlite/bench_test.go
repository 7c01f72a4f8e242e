package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/sqlite"
)

// benchConfig is the configuration of the benchmarks' stores: the real
// clock, random ids, the default retention, and a queue no client fills.
var benchConfig = ledger.Config{MaxQueue: 4096}

// openBench opens a store on a fresh file for a benchmark, with the given
// batch limit; it is closed when the benchmark ends.
func openBench(b *testing.B, cfg ledger.Config, batchLimit int) *sqlite.Store {
	b.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "jobs.db"), cfg,
		sqlite.Options{BatchLimit: batchLimit})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.CheckInvariants(); err != nil {
			b.Error(err)
		}
		s.Close()
	})
	return s
}

// lifecycleOp runs one job's whole life on s, as a runner and a client do:
// Submit, TakeRequest, Start, Finish, Result. Three of the five are writes.
func lifecycleOp(s *sqlite.Store) func() error {
	req, res := []byte("request"), []byte("result")
	return func() error {
		id, _, err := s.Submit(ctx, ledger.Submission{TaskID: "bench"}, req)
		if err != nil {
			return err
		}
		if _, err := s.TakeRequest(ctx, id); err != nil {
			return err
		}
		if _, err := s.Start(ctx, id); err != nil {
			return err
		}
		if _, err := s.Finish(ctx, id, res); err != nil {
			return err
		}
		_, _, err = s.Result(ctx, id)
		return err
	}
}

// BenchmarkLifecycle runs whole lifecycles from 1, 8 and 32 clients at
// once on a store with group commit (the subject) and on one that commits
// every write alone (BatchLimit 1, the baseline), alternately in one run.
// Besides benchcmp's time per job and ratio it reports each side's jobs/s
// and commits per job: every commit is one fsync of the log, and a job's
// three writes cost three of them without group commit.
func BenchmarkLifecycle(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) {
			group := openBench(b, benchConfig, sqlite.DefaultBatchLimit)
			single := openBench(b, benchConfig, 1)
			g0, s0 := group.WriteStats().Commits, single.WriteStats().Commits
			r := benchcmp.AlternateParallel(b, clients, 4, lifecycleOp(group), lifecycleOp(single))
			jobs := float64(r.Ops)
			b.ReportMetric(jobs/r.Subject.Seconds(), "group-jobs/s")
			b.ReportMetric(jobs/r.Baseline.Seconds(), "single-jobs/s")
			b.ReportMetric(float64(group.WriteStats().Commits-g0)/jobs, "group-commits/job")
			b.ReportMetric(float64(single.WriteStats().Commits-s0)/jobs, "single-commits/job")
		})
	}
}

// BenchmarkOpenRetained opens and closes a file holding 100,000 retained
// DONE jobs (the subject) and an empty one (the baseline), alternately:
// the cold start a restart pays, which Open's quick_check and counts make
// proportional to the file.
func BenchmarkOpenRetained(b *testing.B) {
	const retained = 100_000
	cfg := ledger.Config{MaxQueue: 4096, JobTTL: -1, MaxCompleted: -1}
	full := filepath.Join(b.TempDir(), "full.db")
	fill(b, full, cfg, retained)
	empty := filepath.Join(b.TempDir(), "empty.db")
	fill(b, empty, cfg, 0)
	open := func(path string) func() error {
		return func() error {
			s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
			if err != nil {
				return err
			}
			if n := s.Stats().Retained; path == full && n != retained {
				return fmt.Errorf("%d retained, want %d", n, retained)
			}
			return s.Close()
		}
	}
	benchcmp.Alternate(b, 1, open(full), open(empty))
}

// fill leaves the file at path holding n DONE jobs: the store creates the
// schema, and the rows, as the store writes a DONE job (its request
// released, its result, its times, its completion seq and its admission
// ordinal, with meta's next_n after them), are inserted in one statement
// behind its back, which takes a second where 300,000 writes through the
// store would take minutes. The store then opens the file and
// checks its invariants, so a row unlike the store's own fails here.
func fill(b *testing.B, path string, cfg ledger.Config, n int) {
	b.Helper()
	s, err := sqlite.Open(ctx, path, cfg, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	t0 := time.Now().UnixNano()
	_, err = db.Exec(`WITH RECURSIVE n (i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
		INSERT INTO jobs (id, task_id, state, result, created_at, started_at, completed_at, seq, n)
		SELECT printf('J%09d', i), 'fill', 2, CAST('result' AS BLOB), ?2 + i, ?2 + i, ?2 + i, i, i FROM n`, n, t0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err = db.Exec(`UPDATE meta SET value = ?1 + 1 WHERE key = 'next_n'`, n); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = sqlite.Open(ctx, path, cfg, sqlite.Options{}); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckInvariants(); err != nil {
		b.Fatal(err)
	}
	if got := s.Stats().Retained; got != n {
		b.Fatalf("%d retained, want %d", got, n)
	}
}
