package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/jobledger/jobledger/internal/stress/httpstress"
)

// runCrash is -level=crash: httpstress.RunCrash, then the history, restarts
// and all, checked with retention that evicts nothing (a 404 for a job a
// 202 named is a lost job). dir holds the store and the server logs; when
// empty, a temporary one is made, and removed if the run passes. With
// powerCut, the store is on a lossyfs mount (dir/mnt, its durable state in
// dir/disk) and each kill is followed by a power cut.
func runCrash(ctx context.Context, cfg httpstress.CrashConfig, powerCut bool, dir string, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	dir, temp, err := runDir(dir, "lincheck-crash-*")
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	cfg.Dir = dir
	storeDir, kills := dir, "kills"
	var d *disk
	if powerCut {
		if d, err = mountDisk(dir); err != nil {
			fmt.Fprintln(stderr, "lincheck: -power-cut:", err)
			return exitSetup
		}
		defer d.unmount() // a no-op once unmounted below
		storeDir, kills, cfg.PowerCut = d.mnt, "kills with power cuts", d.cut
	}
	if cfg.Store == "" {
		cfg.Store = "sqlite:" + filepath.Join(storeDir, "jobs.db")
	}
	fmt.Fprintf(stdout, "lincheck: level=crash seed=%d: %s -store %s, %d %s after %v-%v each; %d submitters, %d server workers, %d pollers, %d waiters, max-queue %d, echo sleep <= %v, job timeout %v\n",
		cfg.Seed, cfg.Server, cfg.Store, cfg.Cycles, kills, cfg.MinLife, cfg.MaxLife, cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters, cfg.MaxQueue, cfg.MaxSleep, cfg.JobTimeout)
	res, err := httpstress.RunCrash(ctx, cfg)
	if d != nil {
		// The last life stopped cleanly; the durable state stays in dir/disk.
		if uerr := d.unmount(); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err, "(logs in "+dir+")")
		return exitSetup
	}
	summary := fmt.Sprintf("  crash: %v, %d lives, %d operations, %d accepted, %d rejected, %d in flight at a kill or lost, %d reads of acknowledged jobs after restarts; keyed: %d replays, %d 422s",
		res.Elapsed.Round(time.Millisecond), res.Lives, len(res.History), res.Accepted, res.Rejected, res.Lost, res.Checked, res.Replays, res.Conflicts)
	return checkHTTPRun(httpRun{
		history: res.History, walks: res.Walks, violations: res.Violations, maxQueue: cfg.MaxQueue, summary: summary,
		retained: true, dir: dir, temp: temp, dirWhat: "store and server logs",
	}, checkTimeout, outDir, historyPath, stdout, stderr)
}
