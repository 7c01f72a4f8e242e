package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jobledger/jobledger/linearizability"
)

// runReplay is -check FILE: the history a run kept with -history, checked
// again as that run checked it (its level, bound, retention and whether
// the server knew its TTL come from the file's header), without running anything. It is how a failed or
// inconclusive gate is looked at after the fact, with a longer
// -check-timeout or -admission-porcupine.
func runReplay(path string, checkTimeout time.Duration, outDir string, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	hf, err := linearizability.ReadHistory(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "lincheck: %s: %v\n", path, err)
		return exitSetup
	}
	cfg := linearizability.CheckConfig{
		MaxQueue: hf.MaxQueue, Retained: hf.Retained, KnowsTTL: hf.KnowsTTL, Timeout: checkTimeout, VisualizeDir: outDir, AdmissionPorcupine: admissionPorcupine,
	}
	check := linearizability.Check
	if hf.Level == "http" {
		check = linearizability.CheckHTTP
	}
	fmt.Fprintf(stdout, "lincheck: %s: %d operations, level=%s, max-queue %d, retained %v, knows ttl %v\n", path, len(hf.Ops), levelName(hf.Level), hf.MaxQueue, hf.Retained, hf.KnowsTTL)
	rep := check(hf.Ops, cfg)
	printCheck(stdout, rep)
	var walkErr error
	if len(hf.Walks) > 0 {
		walkErr = checkWalks(hf.Ops, hf.Walks, hf.Retained, stdout)
	}
	return verdict(rep, nil, walkErr, stdout)
}

// levelName is a history file's level as the -level flag spells it.
func levelName(level string) string {
	if level == "" {
		return "table"
	}
	return level
}
