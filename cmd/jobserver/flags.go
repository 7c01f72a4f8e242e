package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
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
	maxReply := fs.Int64("max-reply-bytes-in-flight", 0, "bytes that replies carrying a result may hold at once; beyond it they get 503")
	maxPixels := fs.Int("max-pixels", 0, "largest image the fingerprint model decodes, in pixels (width x height)")
	maxWait := fs.Int64("max-wait", 0, "default and ceiling of a wait, in `ms`")
	readTimeout := fs.Int64("read-timeout", 0, "time to read a whole request, body included, in `ms` (0: none)")
	writeTimeout := fs.Int64("write-timeout", 0, "time to read the body and write the reply, in `ms`, on top of max_wait for a wait and async_timeout for /infer (0: none)")
	idleTimeout := fs.Int64("idle-timeout", 0, "time a keep-alive connection may sit idle, in `ms` (0: none)")
	asyncEnabled := fs.Bool("async-enabled", true, "serve the /jobs routes")
	asyncTimeout := fs.Int64("async-timeout", 0, "job deadline from admission, in `ms`")
	asyncMaxQueue := fs.Int("async-max-queue", 0, "jobs PENDING or RUNNING at most (<= 0 admits nothing)")
	asyncJobTTL := fs.Int64("async-job-ttl", 0, "retention of finished jobs, in `ms`")
	asyncMaxCompleted := fs.Int("async-max-completed", 0, "finished jobs retained at most")
	store := fs.String("store", "", "the `store` that keeps the jobs: memory (lost on exit), sqlite:PATH, or postgres://... (a database shared by every server that names it)")
	replica := fs.String("replica", "", "this server's `name` among the replicas on one PostgreSQL store, kept across its restarts")
	lease := fs.Int64("lease", 0, "with a PostgreSQL store: how long a running job's lease lasts unrenewed, in `ms` (0: the store's default)")
	addrFile := fs.String("addr-file", "", "write the listening address to `file` once listening")
	repair := fs.Bool("repair", false, "with -store sqlite:PATH: recompute the file's stored depth from its jobs, accept the commits it holds as all there are, say what changed, and exit (refused while a server holds the file)")
	tokensFile := fs.String("tokens-file", "", "the token `file`: every route but /healthz needs a bearer token it holds (docs/http.md)")
	tlsCert := fs.String("tls-cert", "", "PEM `file` of the certificate chain; with -tls-key, serve HTTPS (TLS 1.2 at least)")
	tlsKey := fs.String("tls-key", "", "PEM `file` of the private key of -tls-cert")
	insecure := fs.Bool("insecure", false, "serve a non-loopback -listen address without -tokens-file")
	newToken := fs.String("new-token", "", "print a new token for `tenant` and its line of the token file, and exit")
	role := fs.String("role", "", "with -new-token: the token's `role`, submit (the default), admin or metrics")
	grace := fs.Duration("grace", 10*time.Second, "after a signal, serve reads and let running jobs finish this long, refusing new work")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["new-token"] {
		if *role == "" {
			*role = "submit"
		}
		return options{newToken: *newToken, role: *role}, nil
	}
	if set["role"] {
		return options{}, errors.New("-role is given only with -new-token")
	}

	cfg := config.Default()
	if *configPath != "" {
		f, err := os.Open(*configPath)
		if err != nil {
			return options{}, err
		}
		cfg, err = config.Read(f)
		f.Close()
		if err != nil {
			return options{}, fmt.Errorf("%s: %w", *configPath, err)
		}
	}
	var err error
	ms := func(key string, v int64, dst *time.Duration) {
		if err == nil {
			*dst, err = config.Millis(key, v)
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
		case "max-reply-bytes-in-flight":
			cfg.MaxReplyBytesInFlight = *maxReply
		case "max-pixels":
			cfg.MaxPixels = *maxPixels
		case "max-wait":
			ms("max_wait", *maxWait, &cfg.MaxWait)
		case "read-timeout":
			ms("read_timeout", *readTimeout, &cfg.ReadTimeout)
		case "write-timeout":
			ms("write_timeout", *writeTimeout, &cfg.WriteTimeout)
		case "idle-timeout":
			ms("idle_timeout", *idleTimeout, &cfg.IdleTimeout)
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
		case "store":
			cfg.Store = *store
		case "replica":
			cfg.Replica = *replica
		case "lease":
			ms("lease", *lease, &cfg.Lease)
		case "tokens-file":
			cfg.TokensFile = *tokensFile
		case "tls-cert":
			cfg.TLSCert = *tlsCert
		case "tls-key":
			cfg.TLSKey = *tlsKey
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
	return options{cfg: cfg, addrFile: *addrFile, grace: *grace, repair: *repair, insecure: *insecure}, nil
}
