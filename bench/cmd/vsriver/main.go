// Command vsriver runs the same job workloads on the PostgreSQL store of
// package store/postgres and on River (riverqueue/river v0.51.2), side by
// side on one PostgreSQL server, and prints their figures and ratios.
//
// The workloads, each with -jobs jobs and the same workers, inserting
// goroutines and pool size on both sides: insert-only (jobs/s), drain (a
// backlog inserted first, untimed, then drained), insert-then-drain
// (inserting and working at once, until all completed), replicas (drain
// with -replicas stores or clients on one database) and latency (-rate
// jobs/s for -duration, insert to completion seen by the inserter).
//
// Each workload runs -reps times on each side, the order of the sides
// alternating (ours first, then River first, ...), each run on a database
// created for it and dropped after. A figure is the median of the reps,
// with the range in brackets. WAL flushes (pg_stat_wal.wal_sync, for the
// whole server), commits (pg_stat_database.xact_commit, of the run's
// database) and writing transactions (transaction ids assigned) are
// counted over the measured phase. A run that exceeds -timeout is a
// failure: it gives no figure, and the command exits 1.
//
// # Usage
//
//	vsriver -dsn postgres://user@127.0.0.1:5432/postgres [-jobs 20000] [-reps 3]
//
// The DSN names a role that may create and drop databases; -dsn defaults
// to $JOBLEDGER_PG_DSN, which scripts/pg run sets (make bench-river runs
// it so, on a durable server). Only loopback hosts are accepted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

// settings are what both sides run with; the flags set them.
type settings struct {
	jobs      int           // jobs of each throughput workload
	reps      int           // repetitions of each workload on each side
	workers   int           // workers of each store or client
	inserters int           // goroutines inserting at once
	conns     int32         // connections of each store's or client's pool
	replicas  int           // stores or clients of the replicas workload
	rate      int           // latency: jobs inserted a second
	duration  time.Duration // latency: how long jobs are inserted
	timeout   time.Duration // bound of one run of one side
}

func main() {
	os.Exit(mainErr())
}

// mainErr parses the flags, runs the workloads and prints the tables; it
// returns the exit status: 0, 1 when a run failed, 2 on bad flags.
func mainErr() int {
	var (
		set       settings
		dsn       string
		workloads string
	)
	flag.StringVar(&dsn, "dsn", os.Getenv("JOBLEDGER_PG_DSN"), "PostgreSQL DSN of a role that may create databases (default $JOBLEDGER_PG_DSN)")
	flag.IntVar(&set.jobs, "jobs", 20000, "jobs of each throughput workload")
	flag.IntVar(&set.reps, "reps", 3, "repetitions of each workload on each side")
	flag.IntVar(&set.workers, "workers", 8, "workers of each store or client")
	flag.IntVar(&set.inserters, "inserters", 8, "goroutines inserting at once")
	var conns int
	flag.IntVar(&conns, "conns", 16, "connections of each store's or client's pool")
	flag.IntVar(&set.replicas, "replicas", 3, "stores or clients of the replicas workload")
	flag.IntVar(&set.rate, "rate", 50, "latency workload: jobs inserted a second")
	flag.DurationVar(&set.duration, "duration", 10*time.Second, "latency workload: how long jobs are inserted")
	flag.DurationVar(&set.timeout, "timeout", 10*time.Minute, "bound of one run of one side, its setup included; a run past it fails")
	flag.StringVar(&workloads, "workloads", strings.Join(workloadNames(), ","), "comma-separated workloads to run")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run, both sides, to `file`")
	flag.Parse()
	set.conns = int32(conns)
	chosen, err := choose(workloads)
	if err == nil {
		err = set.validate(dsn)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vsriver:", err)
		return 2
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "vsriver:", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	h, err := newHarness(ctx, dsn, set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vsriver:", err)
		return 1
	}
	defer h.close()
	h.header(os.Stdout)
	failed := false
	var res []outcome
	for _, w := range chosen {
		o := h.workload(ctx, w)
		failed = failed || o.failed()
		res = append(res, o)
		if ctx.Err() != nil {
			break
		}
	}
	report(os.Stdout, set, res)
	fmt.Printf("\ntotal %s\n", time.Since(start).Round(time.Second))
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

// validate rejects settings no run can use.
func (s settings) validate(dsn string) error {
	switch {
	case dsn == "":
		return errors.New("no -dsn and no $JOBLEDGER_PG_DSN")
	case s.jobs < 1, s.reps < 1, s.workers < 1, s.inserters < 1, s.replicas < 1, s.rate < 1:
		return errors.New("-jobs, -reps, -workers, -inserters, -replicas and -rate must be positive")
	case s.conns < 2 || s.conns > 1000:
		return errors.New("-conns must be between 2 and 1000")
	case s.jobs > 10_000_000:
		return errors.New("-jobs must be at most 10,000,000")
	case s.duration <= 0 || s.timeout <= 0:
		return errors.New("-duration and -timeout must be positive")
	case s.latencyJobs() < 1:
		return errors.New("-rate × -duration gives no job")
	}
	return loopbackOnly(dsn)
}

// latencyJobs is the number of jobs of the latency workload.
func (s settings) latencyJobs() int {
	return int(float64(s.rate) * s.duration.Seconds())
}
