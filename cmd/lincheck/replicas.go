package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jobledger/jobledger/internal/stress/httpstress"
)

// runReplicas is -level=http with -replicas N: httpstress.RunReplicas (N
// jobserver processes on one store, one killed and restarted), then the
// whole history checked with retention that evicts nothing, as the crash
// level does. dir holds each replica's address file and logs; when empty,
// a temporary one is made, and removed if the run passes.
func runReplicas(ctx context.Context, cfg httpstress.ReplicasConfig, dir string, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	dir, temp, err := runDir(dir, "lincheck-replicas-*")
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	cfg.Dir = dir
	fmt.Fprintf(stdout, "lincheck: level=http seed=%d %v: %d replicas of %s -store %s, lease %v, one killed at %v and restarted %v later; per replica %d submitters, %d server workers, %d pollers, %d waiters; max-queue %d, echo sleep <= %v, job timeout %v\n",
		cfg.Seed, cfg.Duration, cfg.Replicas, cfg.Server, cfg.Store, cfg.Lease, cfg.KillAt, cfg.DownFor, cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters, cfg.MaxQueue, cfg.MaxSleep, cfg.JobTimeout)
	res, err := httpstress.RunReplicas(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err, "(logs in "+dir+")")
		return exitSetup
	}
	summary := fmt.Sprintf("  replicas: %v, %s killed, %d lives, %d operations, %d accepted, %d rejected, %d in flight at the kill or lost, %d reads of acknowledged jobs after the restart; seen ended by the kill: %d worker lost, %d interrupted by restart; keyed: %d replays, %d 422s",
		res.Elapsed.Round(time.Millisecond), res.Victim, res.Lives, len(res.History), res.Accepted, res.Rejected, res.Lost, res.Checked, res.Reaped, res.Interrupted, res.Replays, res.Conflicts)
	return checkHTTPRun(httpRun{
		history: res.History, walks: res.Walks, violations: res.Violations, maxQueue: cfg.MaxQueue, summary: summary,
		retained: true, dir: dir, temp: temp, dirWhat: "server logs",
	}, checkTimeout, outDir, historyPath, stdout, stderr)
}
