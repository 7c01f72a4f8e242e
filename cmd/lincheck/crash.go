package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jobledger/jobledger/linearizability"
	"github.com/jobledger/jobledger/stress"
)

// runCrash is -level=crash: stress.RunCrash, then the history, restarts
// and all, checked with retention that evicts nothing (a 404 for a job a
// 202 named is a lost job). dir holds the store and the server logs; when
// empty, a temporary one is made, and removed if the run passes.
func runCrash(ctx context.Context, cfg stress.CrashConfig, dir string, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	temp := dir == ""
	if temp {
		var err error
		if dir, err = os.MkdirTemp("", "lincheck-crash-*"); err != nil {
			fmt.Fprintln(stderr, "lincheck:", err)
			return exitSetup
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	cfg.Dir = dir
	if cfg.Store == "" {
		cfg.Store = "sqlite:" + filepath.Join(dir, "jobs.db")
	}
	fmt.Fprintf(stdout, "lincheck: level=crash seed=%d: %s -store %s, %d kills after %v-%v each; %d submitters, %d server workers, %d pollers, %d waiters, max-queue %d, echo sleep <= %v, job timeout %v\n",
		cfg.Seed, cfg.Server, cfg.Store, cfg.Cycles, cfg.MinLife, cfg.MaxLife, cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters, cfg.MaxQueue, cfg.MaxSleep, cfg.JobTimeout)
	res, err := stress.RunCrash(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err, "(logs in "+dir+")")
		return exitSetup
	}
	if historyPath != "" {
		hf := linearizability.HistoryFile{MaxQueue: cfg.MaxQueue, Level: "http", Retained: true, Ops: res.History}
		if err := writeFile(historyPath, hf); err != nil {
			fmt.Fprintln(stderr, "lincheck:", err)
			return exitSetup
		}
	}
	rep := linearizability.CheckHTTP(res.History, linearizability.CheckConfig{
		MaxQueue: cfg.MaxQueue, Retained: true, Timeout: checkTimeout, VisualizeDir: outDir, AdmissionPorcupine: admissionPorcupine,
	})
	fmt.Fprintf(stdout, "  crash: %v, %d lives, %d operations, %d accepted, %d rejected, %d in flight at a kill or lost, %d reads of acknowledged jobs after restarts\n",
		res.Elapsed.Round(time.Millisecond), res.Lives, len(res.History), res.Accepted, res.Rejected, res.Lost, res.Checked)
	printCheck(stdout, rep)
	code := verdict(rep, res.Violations, stdout)
	if code == exitOK && temp {
		os.RemoveAll(dir)
	} else if code != exitOK {
		fmt.Fprintln(stdout, "  store and server logs:", dir)
	}
	return code
}
