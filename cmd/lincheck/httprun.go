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

// httpRun is what a run of the HTTP API leaves to check: its history, the
// walks of the listing beside it, the violations its driver saw, its
// one-line summary, and, for a run of real server processes (the crash and
// replicas levels), the folder of its logs.
type httpRun struct {
	history    []porcupine.Operation
	walks      []linearizability.Walk // of the listing, beside history
	violations []string
	maxQueue   int
	summary    string
	// retained: the servers evict nothing (a 404 for a job a 202 named is
	// a lost job, and a walk owes every job admitted before it).
	retained bool
	dir      string // "" for none
	temp     bool   // dir is a temporary folder, removed if the run passes
	dirWhat  string // what dir holds, for the line that names it
}

// checkHTTPRun writes the run's history if asked, checks it and its walks
// with a known TTL (every server knows its TTL, so every terminal snapshot
// carries expires_at), prints the summary and the check, and returns the
// exit code; it removes a temporary folder of a run that passed and names
// the folder of one that did not.
func checkHTTPRun(r httpRun, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	if historyPath != "" {
		hf := linearizability.HistoryFile{MaxQueue: r.maxQueue, Level: "http", Retained: r.retained, Walks: r.walks, KnowsTTL: true, Ops: r.history}
		if err := writeFile(historyPath, hf); err != nil {
			fmt.Fprintln(stderr, "lincheck:", err)
			return exitSetup
		}
	}
	rep := linearizability.CheckHTTP(r.history, linearizability.CheckConfig{
		MaxQueue: r.maxQueue, Retained: r.retained, KnowsTTL: true, Timeout: checkTimeout, VisualizeDir: outDir, AdmissionPorcupine: admissionPorcupine,
	})
	fmt.Fprintln(stdout, r.summary)
	printCheck(stdout, rep)
	walkErr := checkWalks(r.history, r.walks, r.retained, stdout)
	code := verdict(rep, r.violations, walkErr, stdout)
	switch {
	case r.dir == "":
	case code == exitOK && r.temp:
		os.RemoveAll(r.dir)
	case code != exitOK:
		fmt.Fprintf(stdout, "  %s: %s\n", r.dirWhat, r.dir)
	}
	return code
}
