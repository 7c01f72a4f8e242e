// Command lincheck runs a stress of the job ledger, records every
// operation, and checks the history for linearizability against the
// per-job and admission models, and the stress invariants at the end.
// -level=table drives the ledger in process; -level=http starts a server
// (echo model) on 127.0.0.1 and drives it through its HTTP API;
// -level=crash starts the jobserver binary on a durable store, kills it
// with SIGKILL -cycles times under that load and starts it again, and
// checks the whole history, restarts included (see crash.go); with
// -power-cut, the store is on a lossyfs mount whose unsynced writes each
// kill drops, as a power cut would.
// -level=http -replicas N starts N jobserver replicas on one shared store,
// spreads the clients across them, kills one with SIGKILL mid-run and
// starts it again, and checks the whole history (see replicas.go).
//
// Usage:
//
//	go run ./cmd/lincheck [flags]
//
// Exit status: 0 when every run passed; 3 for a linearizability violation,
// 4 for a stress-invariant violation, 5 when the checker could not decide
// in time (the first failure found decides, in that order of precedence);
// 1 for a usage or setup error. 2 is left to the Go runtime, which exits
// with it on a panic, so that a crash is never read as a verdict.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/jobledger/jobledger/internal/stress"
	"github.com/jobledger/jobledger/internal/stress/httpstress"
	"github.com/jobledger/jobledger/linearizability"
)

// Exit codes.
const (
	exitOK           = 0
	exitSetup        = 1
	exitLinearizable = 3
	exitInvariant    = 4
	exitInconclusive = 5
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	def := stress.DefaultConfig()
	fs := flag.NewFlagSet("lincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("level", "table", "what to drive: table (in process), http (a server on loopback) or crash (a jobserver process, killed and restarted)")
	short := fs.Bool("short", false, "quick mode: 500ms runs")
	runs := fs.Int("runs", 1, "number of runs, with seeds seed, seed+1, ...")
	seed := fs.Uint64("seed", def.Seed, "seed of the first run")
	duration := fs.Duration("duration", def.Duration, "length of each run")
	maxOps := fs.Int("max-ops", def.MaxOps, "stop a run once its history holds this many operations")
	submitters := fs.Int("submitters", def.Submitters, "submitting clients")
	runners := fs.Int("runners", def.Runners, "runners (take, start, end each job); at -level=http, the server's workers")
	pollers := fs.Int("pollers", def.Pollers, "polling clients (snapshot, result, cancel)")
	waiters := fs.Int("waiters", def.Waiters, "waiting clients")
	maxQueue := fs.Int("max-queue", def.MaxQueue, "table MaxQueue")
	maxCompleted := fs.Int("max-completed", def.MaxCompleted, "table MaxCompleted")
	ttl := fs.Duration("ttl", def.JobTTL, "table JobTTL")
	waitTimeout := fs.Duration("wait-timeout", def.WaitTimeout, "deadline of a bounded Wait")
	grace := fs.Duration("grace", def.Grace, "how long the end of a run waits for blocked waiters")
	checkTimeout := fs.Duration("check-timeout", time.Minute, "timeout of each porcupine check")
	admPorcupine := fs.Bool("admission-porcupine", false, "check the admission model with porcupine (the reference: exponential, for small runs) instead of the sweep")
	out := fs.String("out", "", "directory for the HTML visualization of a violation (default: the temp dir)")
	historyPath := fs.String("history", "", "write the last run's history to this file")
	replay := fs.String("check", "", "run nothing: check the history in this file (written by -history) and exit")
	quiet := fs.Bool("q", false, "no progress lines")
	hdef := httpstress.DefaultHTTPConfig()
	maxSleep := fs.Duration("max-sleep", hdef.MaxSleep, "http: longest echo sleep of a job")
	jobTimeout := fs.Duration("job-timeout", hdef.JobTimeout, "http: the server's async_timeout")
	keyedEvery := fs.Int("keyed-every", def.KeyedEvery, "one submit in N is keyed: SubmitKeyed (table), an Idempotency-Key (http, crash, replicas) (0: none is)")
	cdef := httpstress.DefaultCrashConfig()
	server := fs.String("server", "bin/jobserver", "crash: the jobserver binary")
	store := fs.String("store", "", "crash: the server's -store (default sqlite:DIR/jobs.db); replicas: every server's -store, required")
	cycles := fs.Int("cycles", cdef.Cycles, "crash: kills, each followed by a restart")
	powerCut := fs.Bool("power-cut", false, "crash: put the store on a lossyfs mount (needs root) and cut its power at each kill, dropping what was not fsynced")
	dir := fs.String("dir", "", "crash, replicas: directory for the store, the address files and the server logs (default: a new temporary one, removed when the run passes)")
	rdef := httpstress.DefaultReplicasConfig()
	replicas := fs.Int("replicas", 0, "http: run this many jobserver replicas (-server) on one -store (a postgres:// URL), the clients spread across them, one killed with SIGKILL and restarted mid-run (0: one server in process)")
	lease := fs.Duration("lease", rdef.Lease, "replicas: each server's -lease, after which a dead replica's jobs end FAILED \"worker lost\"")
	killAt := fs.Duration("kill-at", rdef.KillAt, "replicas: when, from the start of the load, one replica is killed")
	downFor := fs.Duration("down-for", rdef.DownFor, "replicas: how long the killed replica stays down")
	if err := fs.Parse(args); err != nil {
		return exitSetup
	}
	admissionPorcupine = *admPorcupine
	if *replay != "" {
		return runReplay(*replay, *checkTimeout, *out, stdout, stderr)
	}
	if *level != "table" && *level != "http" && *level != "crash" {
		fmt.Fprintf(stderr, "lincheck: -level=%s: want table, http or crash\n", *level)
		return exitSetup
	}
	if *powerCut && *level != "crash" {
		fmt.Fprintln(stderr, "lincheck: -power-cut needs -level=crash")
		return exitSetup
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *level == "http" {
		// The HTTP level's own defaults, where no flag overrides them.
		if !set["max-ops"] {
			*maxOps = hdef.MaxOps
		}
		if !set["ttl"] {
			*ttl = hdef.JobTTL
		}
		if !set["wait-timeout"] {
			*waitTimeout = hdef.WaitTimeout
		}
	}
	if *short {
		*duration = 500 * time.Millisecond
	}
	cfg := def
	cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters = *submitters, *runners, *pollers, *waiters
	cfg.Duration, cfg.MaxOps = *duration, *maxOps
	cfg.MaxQueue, cfg.MaxCompleted, cfg.JobTTL = *maxQueue, *maxCompleted, *ttl
	cfg.WaitTimeout, cfg.Grace = *waitTimeout, *grace
	cfg.KeyedEvery = *keyedEvery
	if !*quiet {
		cfg.Progress = func(p stress.Progress) {
			fmt.Fprintf(stdout, "  %6v  ops %7d  accepted %6d  rejected %7d\n", p.Elapsed, p.Ops, p.Accepted, p.Rejected)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *replicas != 0 {
		if *level != "http" || *store == "" {
			fmt.Fprintln(stderr, "lincheck: -replicas needs -level=http and a -store shared by the replicas")
			return exitSetup
		}
		rcfg := rdef
		rcfg.Seed, rcfg.Server, rcfg.Store, rcfg.Replicas = *seed, *server, *store, *replicas
		rcfg.Lease, rcfg.KillAt, rcfg.DownFor = *lease, *killAt, *downFor
		// The replicas test's own defaults, where no flag overrides them.
		for name, apply := range map[string]func(){
			"duration":    func() { rcfg.Duration = *duration },
			"submitters":  func() { rcfg.Submitters = *submitters },
			"pollers":     func() { rcfg.Pollers = *pollers },
			"waiters":     func() { rcfg.Waiters = *waiters },
			"runners":     func() { rcfg.Runners = *runners },
			"max-queue":   func() { rcfg.MaxQueue = *maxQueue },
			"max-sleep":   func() { rcfg.MaxSleep = *maxSleep },
			"job-timeout": func() { rcfg.JobTimeout = *jobTimeout },
			"keyed-every": func() { rcfg.KeyedEvery = *keyedEvery },
		} {
			if set[name] {
				apply()
			}
		}
		rcfg.Progress = cfg.Progress
		return runReplicas(ctx, rcfg, *dir, *checkTimeout, *out, *historyPath, stdout, stderr)
	}
	if *level == "crash" {
		ccfg := cdef
		ccfg.Seed, ccfg.Server, ccfg.Store, ccfg.Cycles = *seed, *server, *store, *cycles
		// The crash test's own defaults, where no flag overrides them.
		for name, apply := range map[string]func(){
			"submitters":  func() { ccfg.Submitters = *submitters },
			"pollers":     func() { ccfg.Pollers = *pollers },
			"waiters":     func() { ccfg.Waiters = *waiters },
			"runners":     func() { ccfg.Runners = *runners },
			"max-queue":   func() { ccfg.MaxQueue = *maxQueue },
			"max-sleep":   func() { ccfg.MaxSleep = *maxSleep },
			"job-timeout": func() { ccfg.JobTimeout = *jobTimeout },
			"keyed-every": func() { ccfg.KeyedEvery = *keyedEvery },
		} {
			if set[name] {
				apply()
			}
		}
		return runCrash(ctx, ccfg, *powerCut, *dir, *checkTimeout, *out, *historyPath, stdout, stderr)
	}
	code := exitOK
	for i := range *runs {
		cfg.Seed = *seed + uint64(i)
		var c int
		if *level == "http" {
			hcfg := hdef
			hcfg.Config = cfg
			hcfg.MaxSleep, hcfg.JobTimeout = *maxSleep, *jobTimeout
			c = runHTTP(ctx, hcfg, *checkTimeout, *out, *historyPath, stdout, stderr)
		} else {
			c = runOnce(ctx, cfg, *level, *checkTimeout, *out, *historyPath, stdout, stderr)
		}
		code = worse(code, c)
	}
	return code
}

// admissionPorcupine is -admission-porcupine.
var admissionPorcupine bool

// worse returns the exit code of higher precedence.
func worse(a, b int) int {
	rank := map[int]int{exitOK: 0, exitInconclusive: 1, exitInvariant: 2, exitLinearizable: 3, exitSetup: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func runOnce(ctx context.Context, cfg stress.Config, level string, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "lincheck: level=%s seed=%d %v: %d submitters, %d runners, %d pollers, %d waiters, max-queue %d, max-completed %d, ttl %v\n",
		level, cfg.Seed, cfg.Duration, cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters, cfg.MaxQueue, cfg.MaxCompleted, cfg.JobTTL)
	res, err := stress.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	if historyPath != "" {
		if err := writeHistory(historyPath, cfg.MaxQueue, res); err != nil {
			fmt.Fprintln(stderr, "lincheck:", err)
			return exitSetup
		}
	}
	rep := linearizability.Check(res.History, linearizability.CheckConfig{
		MaxQueue: cfg.MaxQueue, Timeout: checkTimeout, VisualizeDir: outDir, AdmissionPorcupine: admissionPorcupine,
	})
	fmt.Fprintf(stdout, "  stress: %v, %d operations, %d accepted, %d rejected, evicted %d by ttl and %d beyond max-completed; keyed: %d replays, %d key conflicts\n",
		res.Elapsed.Round(time.Millisecond), len(res.History), res.Accepted, res.Rejected, res.Stats.EvictedTTL, res.Stats.EvictedLRU, res.Replays, res.Conflicts)
	printCheck(stdout, rep)

	return verdict(rep, res.Violations, nil, stdout)
}

func writeHistory(path string, maxQueue int, res *stress.Result) error {
	return writeFile(path, linearizability.HistoryFile{MaxQueue: maxQueue, Ops: res.History})
}

func writeFile(path string, hf linearizability.HistoryFile) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := linearizability.WriteHistory(f, hf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runHTTP is runOnce for -level=http.
func runHTTP(ctx context.Context, cfg httpstress.HTTPConfig, checkTimeout time.Duration, outDir, historyPath string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "lincheck: level=http seed=%d %v: %d submitters, %d server workers, %d pollers, %d waiters, max-queue %d, max-completed %d, ttl %v, echo sleep <= %v, job timeout %v\n",
		cfg.Seed, cfg.Duration, cfg.Submitters, cfg.Runners, cfg.Pollers, cfg.Waiters, cfg.MaxQueue, cfg.MaxCompleted, cfg.JobTTL, cfg.MaxSleep, cfg.JobTimeout)
	res, err := httpstress.RunHTTP(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lincheck:", err)
		return exitSetup
	}
	// RunHTTP gives the server a TTL of at least 1 ms: it knows its TTL.
	summary := fmt.Sprintf("  stress: %v, %d operations, %d accepted, %d rejected, %d lost replies, depth %d and %d retained at the end; keyed: %d replays, %d 422s",
		res.Elapsed.Round(time.Millisecond), len(res.History), res.Accepted, res.Rejected, res.Lost, res.Depth, res.Retained, res.Replays, res.Conflicts)
	return checkHTTPRun(httpRun{
		history: res.History, walks: res.Walks, violations: res.Violations, maxQueue: cfg.MaxQueue, summary: summary,
	}, checkTimeout, outDir, historyPath, stdout, stderr)
}

// printCheck prints what the checks cost.
func printCheck(stdout io.Writer, rep linearizability.Report) {
	var adm string
	switch rep.AdmissionMethod {
	case "":
		adm = "not checked"
	case "sweep":
		adm = fmt.Sprintf("sweep, %d states at most", rep.AdmissionStates)
	default:
		adm = fmt.Sprintf("%s, %d segments", rep.AdmissionMethod, rep.AdmissionSegments)
	}
	var left string
	if rep.UnknownLeftOut > 0 {
		left = fmt.Sprintf(", %d of unknown outcome left out", rep.UnknownLeftOut)
	}
	fmt.Fprintf(stdout, "  check:  %d job partitions (largest %d ops%s) in %v; admission %d ops (%s) in %v\n",
		rep.JobPartitions, rep.LargestPartition, left, rep.JobCheck.Round(time.Millisecond),
		rep.AdmissionOps, adm, rep.AdmissionCheck.Round(time.Millisecond))
	if rep.KeyOps > 0 {
		var keyLeft string
		if rep.KeyLeftOut > 0 {
			keyLeft = fmt.Sprintf(", %d lost on a key held for good left out", rep.KeyLeftOut)
		}
		fmt.Fprintf(stdout, "  keys:   %d keyed jobs; %d keys, %d ops%s, in %v\n",
			rep.KeyedJobs, rep.KeyPartitions, rep.KeyOps, keyLeft, rep.KeyCheck.Round(time.Millisecond))
	}
}

// verdict prints the failures and the result line, and returns the exit
// code.
func verdict(rep linearizability.Report, violations []string, walkErr error, stdout io.Writer) int {
	code := exitOK
	if walkErr != nil {
		code = worse(code, exitLinearizable)
		fmt.Fprintln(stdout, "  LISTING VIOLATION:", walkErr)
	}
	if len(violations) > 0 {
		code = worse(code, exitInvariant)
		for _, v := range violations {
			fmt.Fprintln(stdout, "  STRESS INVARIANT VIOLATED:", v)
		}
	}
	switch rep.Verdict {
	case linearizability.Violation:
		code = worse(code, exitLinearizable)
		fmt.Fprintln(stdout, "  LINEARIZABILITY VIOLATION:", rep.Message)
		if rep.Visualization != "" {
			fmt.Fprintln(stdout, "  visualization:", rep.Visualization)
		}
	case linearizability.Inconclusive:
		code = worse(code, exitInconclusive)
		fmt.Fprintln(stdout, "  CHECK INCONCLUSIVE:", rep.Message)
	}
	verdict := "PASS"
	if code != exitOK {
		verdict = fmt.Sprintf("FAIL (exit %d)", code)
	}
	fmt.Fprintf(stdout, "  result: %s, history %s\n", verdict, rep.Verdict)
	return code
}
