package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jobledger/jobledger/jobapi"
)

// parseFlags reads the config file named by -config, if any, then applies
// the flags that were set on top of it.
func parseFlags(args []string, out io.Writer) (options, error) {
	fs := flag.NewFlagSet("jobserver", flag.ContinueOnError)
	fs.SetOutput(out)
	configPath := fs.String("config", "", "JSON config `file` (keys in docs/http.md)")
	listen := fs.String("listen", "", "listen `address` (host:port; port 0 picks a free one)")
	workers := fs.Int("workers", 0, "models run at once, both paths together")
	model := fs.String("model", "", "built-in `model`: fingerprint or echo")
	maxBody := fs.Int64("max-body-bytes", 0, "largest request body")
	maxWait := fs.Int64("max-wait", 0, "default and ceiling of a wait, in `ms`")
	asyncEnabled := fs.Bool("async-enabled", true, "serve the /jobs routes")
	asyncTimeout := fs.Int64("async-timeout", 0, "job deadline from admission, in `ms`")
	asyncMaxQueue := fs.Int("async-max-queue", 0, "jobs PENDING or RUNNING at most (<= 0 admits nothing)")
	asyncJobTTL := fs.Int64("async-job-ttl", 0, "retention of finished jobs, in `ms`")
	asyncMaxCompleted := fs.Int("async-max-completed", 0, "finished jobs retained at most")
	addrFile := fs.String("addr-file", "", "write the listening address to `file` once listening")
	grace := fs.Duration("grace", 10*time.Second, "shutdown grace period for running jobs")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	cfg := jobapi.DefaultConfig()
	if *configPath != "" {
		f, err := os.Open(*configPath)
		if err != nil {
			return options{}, err
		}
		cfg, err = jobapi.ReadConfig(f)
		f.Close()
		if err != nil {
			return options{}, fmt.Errorf("%s: %w", *configPath, err)
		}
	}
	var err error
	ms := func(key string, v int64, dst *time.Duration) {
		if err == nil {
			*dst, err = jobapi.Millis(key, v)
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "listen":
			cfg.Listen = *listen
		case "workers":
			cfg.Workers = *workers
		case "model":
			cfg.Model = *model
		case "max-body-bytes":
			cfg.MaxBodyBytes = *maxBody
		case "max-wait":
			ms("max_wait", *maxWait, &cfg.MaxWait)
		case "async-enabled":
			cfg.AsyncEnabled = *asyncEnabled
		case "async-timeout":
			ms("async_timeout", *asyncTimeout, &cfg.AsyncTimeout)
		case "async-max-queue":
			cfg.AsyncMaxQueue = *asyncMaxQueue
		case "async-job-ttl":
			ms("async_job_ttl", *asyncJobTTL, &cfg.AsyncJobTTL)
		case "async-max-completed":
			cfg.AsyncMaxCompleted = *asyncMaxCompleted
		}
	})
	if err != nil {
		return options{}, err
	}
	if err := cfg.Validate(); err != nil {
		return options{}, err
	}
	if *grace < 0 {
		return options{}, fmt.Errorf("-grace %v is negative", *grace)
	}
	return options{cfg: cfg, addrFile: *addrFile, grace: *grace}, nil
}
