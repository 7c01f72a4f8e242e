package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/jobledger/jobledger/linearizability"
)

// runDir returns dir, made if it does not exist, or, when dir is empty, a
// new temporary folder named by pattern (temp true).
func runDir(dir, pattern string) (string, bool, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", pattern)
		return d, true, err
	}
	return dir, false, os.MkdirAll(dir, 0o755)
}

// retainedRun is what a run of real server processes (the crash and
// replicas levels) leaves to check: its history, the violations its driver
// saw, its one-line summary, and the folder of its logs.
type retainedRun struct {
	history    []porcupine.Operation
	walks      []linearizability.Walk // of the listing, beside history
	violations []string
	maxQueue   int
	summary    string
	dir        string
	temp       bool   // dir is a temporary folder, removed if the run passes
	dirWhat    string // what dir holds, for the line that names it
}

// checkRetained writes the run's history if asked, checks it with retention
// that evicts nothing (a 404 for a job a 202 named is a lost job) and a
// known TTL (expires_at on every terminal snapshot), prints
// the summary and the check, and returns the exit code; it removes a
// temporary folder of a run that passed and names the folder of one that
// did not.
func checkRetained(r retainedRun, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	if historyPath != "" {
		hf := linearizability.HistoryFile{MaxQueue: r.maxQueue, Level: "http", Retained: true, Walks: r.walks, KnowsTTL: true, Ops: r.history}
		if err := writeFile(historyPath, hf); err != nil {
			fmt.Fprintln(stderr, "lincheck:", err)
			return exitSetup
		}
	}
	// The servers run with a TTL of an hour: they know it, and every
	// terminal snapshot carries expires_at.
	rep := linearizability.CheckHTTP(r.history, linearizability.CheckConfig{
		MaxQueue: r.maxQueue, Retained: true, KnowsTTL: true, Timeout: checkTimeout, VisualizeDir: outDir, AdmissionPorcupine: admissionPorcupine,
	})
	fmt.Fprintln(stdout, r.summary)
	printCheck(stdout, rep)
	walkErr := checkWalks(r.history, r.walks, true, stdout)
	code := verdict(rep, r.violations, walkErr, stdout)
	if code == exitOK && r.temp {
		os.RemoveAll(r.dir)
	} else if code != exitOK {
		fmt.Fprintf(stdout, "  %s: %s\n", r.dirWhat, r.dir)
	}
	return code
}
