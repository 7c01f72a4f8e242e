// Command jobload is a load generator for the job API.
//
// Usage:
//
//	jobload [-addr 127.0.0.1:8080] [-mode async|sync] [-c 4] [-d 10s] [-n 0] [-sleep-ms 0 | -image FILE]
//
// Each of -c clients repeats one operation until -d has passed or -n
// operations have been made in all: in async mode the whole job cycle
// (POST /jobs, GET /jobs/{id}/wait until terminal, GET /jobs/{id}/result),
// in sync mode one POST /infer. -n alone runs all its operations, however
// long they take; -d (default 10s) bounds a run only when given, or when
// -n is not. The summary says which bound stopped the run.
//
// Every body carries a small PNG and params {"sleep_ms": -sleep-ms}, so
// that it suits both built-in models; with -image FILE it carries that
// file's bytes, base64, and no params instead, a real load for the
// fingerprint model. A progress line goes to stderr every second and a
// summary to stdout: counts, throughput and p50/p90/p99 latency of the
// successful operations. It exits 1 when any operation failed or none
// succeeded; 429s are counted apart and are not failures. It refuses a
// target that is not a loopback address unless -allow-remote is given.
// With the environment variable JOBLEDGER_TOKEN set, every request carries
// it as a bearer token (a server with a token file); kept out of the
// flags, so that it shows in no process listing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/jobledger/jobledger/client"
)

// tokenEnv names the environment variable that holds the bearer token.
const tokenEnv = "JOBLEDGER_TOKEN"

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobload:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// settings are the command line.
type settings struct {
	addr        string
	mode        string
	clients     int
	duration    time.Duration // 0: no time limit (-n without -d)
	count       int64
	sleepMS     int
	image       string
	waitMS      int
	allowRemote bool
}

func parse(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("jobload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "server `host:port`")
	fs.StringVar(&s.mode, "mode", "async", "async (POST, wait, result) or sync (POST /infer)")
	fs.IntVar(&s.clients, "c", 4, "concurrent clients")
	fs.DurationVar(&s.duration, "d", 10*time.Second, "run at most this long (at most 1h); not applied to -n unless given")
	fs.Int64Var(&s.count, "n", 0, "stop after this many operations in all (0: no count)")
	fs.IntVar(&s.sleepMS, "sleep-ms", 0, "params.sleep_ms sent with each request (echo model)")
	fs.StringVar(&s.image, "image", "", "send this image `file`, base64, with no params (fingerprint model)")
	fs.IntVar(&s.waitMS, "wait-ms", 30000, "timeout of each GET /jobs/{id}/wait, in ms")
	fs.BoolVar(&s.allowRemote, "allow-remote", false, "allow a target that is not a loopback address")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	switch {
	case fs.NArg() > 0:
		return s, fmt.Errorf("unexpected arguments: %v", fs.Args())
	case s.mode != "async" && s.mode != "sync":
		return s, fmt.Errorf("-mode %q: want async or sync", s.mode)
	case s.clients < 1 || s.clients > 1024:
		return s, fmt.Errorf("-c %d: want 1 to 1024", s.clients)
	case s.duration <= 0 || s.duration > time.Hour:
		return s, fmt.Errorf("-d %v: want more than 0 and at most 1h", s.duration)
	case s.count < 0 || s.sleepMS < 0 || s.waitMS < 0:
		return s, errors.New("-n, -sleep-ms and -wait-ms must not be negative")
	case s.image != "" && s.sleepMS != 0:
		return s, errors.New("-image sends no params: -sleep-ms does not apply")
	}
	// -n runs to completion unless -d is given too: the default -d used to
	// cut an -n run short after 10 s.
	dSet := false
	fs.Visit(func(f *flag.Flag) { dSet = dSet || f.Name == "d" })
	if s.count > 0 && !dSet {
		s.duration = 0
	}
	if !s.allowRemote {
		if err := requireLoopback(s.addr); err != nil {
			return s, err
		}
	}
	return s, nil
}

// requireLoopback refuses an address whose host is not a loopback address.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-addr %q is not a loopback address (give -allow-remote to target it)", addr)
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	s, err := parse(args, stderr)
	if err != nil {
		return 0, err
	}
	body, err := requestBody(s.sleepMS)
	if s.image != "" {
		body, err = imageBody(s.image)
	}
	if err != nil {
		return 0, err
	}
	transport := &http.Transport{MaxIdleConnsPerHost: s.clients, MaxConnsPerHost: s.clients}
	defer transport.CloseIdleConnections()
	api, err := client.New("http://"+s.addr, client.Options{HTTPClient: &http.Client{Transport: transport}, Token: os.Getenv(tokenEnv)})
	if err != nil {
		return 0, err
	}
	l := &loader{api: api, body: body, waitMS: s.waitMS}
	op := l.asyncCycle
	if s.mode == "sync" {
		op = l.infer
	}

	ctx, cancel := context.WithCancel(context.Background())
	if s.duration > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), s.duration)
	}
	defer cancel()
	rec := newRecorder(s.count)
	start := time.Now()
	var wg sync.WaitGroup
	for range s.clients {
		wg.Go(func() {
			for rec.take() && ctx.Err() == nil {
				t0 := time.Now()
				res := op(ctx)
				if ctx.Err() != nil && res == resultError {
					return // cut short by the end of the run: not counted
				}
				rec.record(res, time.Since(t0))
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
			fmt.Fprintln(stderr, rec.progress(time.Since(start)))
		}
	}
	stopped := fmt.Sprintf("-d %v elapsed", s.duration)
	if s.count > 0 && rec.finished() == s.count {
		stopped = fmt.Sprintf("-n %d reached", s.count)
	}
	sum := rec.summary(s, time.Since(start), stopped)
	fmt.Fprint(stdout, sum.String())
	if sum.errors > 0 || sum.ok == 0 {
		return 1, nil
	}
	return 0, nil
}
