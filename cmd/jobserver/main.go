// Command jobserver serves the job API of package jobapi. It owns what
// makes a program of the handler: flags, the config file, the listening
// address and the http.Server's timeouts, and the choice, opening and
// closing of the store (store.go).
//
// The config file is parsed here (config.go), not in jobapi: its keys mix
// the handler's (jobapi.Config, which validates its own with the same
// messages) with the binary's (listen, timeouts, store, replica, lease),
// and one parser keeps every key of docs/http.md in one place.
//
// Usage:
//
//	jobserver [-config file.json] [flags]
//
// With no flags it serves the fingerprint model on 127.0.0.1:8080. Flags
// override the config file; docs/http.md lists the keys and defaults. On
// SIGINT or SIGTERM it serves reads but refuses new work (503) for -grace,
// while running jobs finish, ends the jobs left FAILED "server shutting
// down", stops the HTTP server after a bounded drain and exits 0; a second
// signal cuts the grace short (see shutdown). A signal that comes while
// the server starts (its port bound, its store still opening) is taken
// once the store is open, or the process exits with the store's error.
// With -repair and -store sqlite:PATH it repairs the file that a start
// refused (sqlite.Repair), says what it changed and exits.
//
// With -tokens-file every route but /healthz needs a bearer token the file
// holds (package jobapi/auth, secure.go), and a SIGHUP rereads the file
// (and the certificate, with TLS).
// Without one it refuses to listen beyond loopback unless given -insecure.
// With -tls-cert and -tls-key it serves HTTPS. jobserver -new-token TENANT
// prints a new token and its line of the file, and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/internal/redact"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/auth"
	"github.com/jobledger/jobledger/jobapi/console"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(os.Args[1:], log); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "jobserver:", err)
		os.Exit(2)
	}
}

// options are the command line's settings beyond the config.
type options struct {
	cfg      config.Config
	addrFile string
	grace    time.Duration
	repair   bool // -repair: repair the SQLite file and exit
	insecure bool // -insecure: serve a non-loopback address without tokens
	// newToken, when not empty, is the tenant of -new-token: print a
	// token of role and its line, and exit.
	newToken, role string
}

func run(args []string, log *slog.Logger) error {
	opts, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	if opts.newToken != "" {
		return printNewToken(os.Stdout, opts.newToken, opts.role)
	}
	if opts.repair {
		return repairStore(opts.cfg.Store, os.Stdout)
	}
	cfg := opts.cfg
	sec, err := loadSecurity(cfg, opts.insecure)
	if err != nil {
		return err
	}
	// Signals are caught before the store is opened, which can take long:
	// one that comes during the start waits for it, then shuts down as
	// one after the start would (a second one cuts the grace short). A
	// SIGHUP rereads the token file and the certificate, once the server
	// serves.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	hup := make(chan os.Signal, 1)
	if sec.keys != nil || sec.cert != nil {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	// Bind, and say where, before New: on a durable store New starts the
	// jobs it recovers, and a failure after it would close the store under
	// them, ending acknowledged jobs FAILED.
	ln, err := net.Listen("tcp", opts.cfg.Listen)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	if err := refuseExposed(addr, boundExposed(ln.Addr()), sec.keys != nil, opts.insecure); err != nil {
		ln.Close()
		return err
	}
	if opts.addrFile != "" {
		if err := writeAddr(opts.addrFile, addr); err != nil {
			ln.Close()
			return err
		}
	}
	srv, closeStore, err := startServer(opts.cfg, log)
	if err != nil {
		ln.Close()
		if opts.addrFile != "" {
			os.Remove(opts.addrFile) // no server will answer at addr
		}
		return repairHint(err, opts.cfg.Store)
	}
	// The store closes last, after the jobs have ended and the HTTP server
	// has stopped answering reads of them (below); on an early return, here.
	defer closeStore() // an earlier error is the one to report
	// The console reads and cancels through the API's handler, behind the
	// same token check as any client, so that a role sees no more there.
	var h http.Handler
	api := http.Handler(srv)
	if sec.keys != nil {
		api = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) })
	}
	con, err := console.New(console.Options{API: api, Overview: srv.Overview, Leases: srv.Leases,
		Store: redact.Store(cfg.Store), Replica: cfg.Replica, ServerWide: serverWide(sec.keys != nil)})
	if err != nil {
		stopNow(srv)
		return err
	}
	defer con.Close()
	h = console.Mount(srv, con)
	var mw *auth.Middleware
	if sec.keys != nil {
		mw = auth.New(h, sec.keys)
		h = mw
	}
	if sec.keys != nil || sec.cert != nil {
		stop, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			watchHangup(hup, stop, func() {
				if mw != nil {
					reloadTokens(cfg.TokensFile, mw, log)
				}
				if sec.cert != nil {
					reloadCertificate(sec.cert, log)
				}
			})
		}()
		defer func() { close(stop); <-watched }()
	}
	httpSrv := newHTTPServer(cfg, h)
	// net/http's own complaints (a failed TLS handshake, a panic in a
	// handler) go to the JSON log like every other line.
	httpSrv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	if sec.cert != nil {
		serveHTTPS(httpSrv, sec.cert.tlsConfig())
		go func() { served <- httpSrv.ServeTLS(ln, "", "") }()
	} else {
		go func() { served <- httpSrv.Serve(ln) }()
	}
	attrs := []any{"addr", addr, "tls", sec.cert != nil, "model", cfg.Model, "workers", cfg.Workers,
		"async_enabled", cfg.AsyncEnabled, "async_max_queue", cfg.AsyncMaxQueue, "store", redact.Store(cfg.Store)}
	if sec.keys != nil {
		attrs = append(attrs, "tokens", sec.keys.Len())
	}
	log.Info("listening", attrs...)

	select {
	case err := <-served:
		// Serve failed (its listener broke): stop the jobs as a shutdown
		// with no grace does, which leaves a durable store's PENDING jobs
		// for the next start, before the deferred Close closes the store.
		stopNow(srv)
		return err
	case <-sigs:
	}
	shutdown(log, srv, httpSrv, sigs, opts.grace)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := closeStore(); err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	log.Info("stopped")
	return nil
}

// startServer opens the store cfg names and starts the job API on it. closeStore
// ends the server's use of the store and closes it; calls after the first
// return the first's result.
func startServer(cfg config.Config, log *slog.Logger) (srv *jobapi.Server, closeStore func() error, err error) {
	st, durable, err := openStore(cfg, cfg.LedgerConfig(), log)
	if err != nil {
		return nil, nil, err
	}
	srv, err = jobapi.New(st, cfg.Config, jobapi.Options{Logger: log, LedgerJobTTL: cfg.AsyncJobTTL, Durable: durable})
	if err != nil {
		_ = st.Close() // the error of New is the one to report
		return nil, nil, err
	}
	return srv, sync.OnceValue(func() error {
		_ = srv.Close() // always nil
		return st.Close()
	}), nil
}

// stopNow shuts srv down with no grace period.
func stopNow(srv *jobapi.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = srv.Shutdown(ctx) // the grace is over before it began: ctx's error
}

// maxReadHeaderTimeout bounds the reading of a request header, so that a
// client trickling a header is cut off sooner than read_timeout would.
const maxReadHeaderTimeout = 10 * time.Second

// newHTTPServer is the http.Server of h with cfg's timeouts, where zero
// means none (net/http reads a zero IdleTimeout as "use ReadTimeout", hence
// -1). Without them, slow-body and idle keep-alive connections are held for
// ever. WriteTimeout is lengthened per request on
// the routes that hold one (jobapi's holdWriteDeadline). The API answers
// OPTIONS * itself, with Allow.
func newHTTPServer(cfg config.Config, h http.Handler) *http.Server {
	header := maxReadHeaderTimeout
	if cfg.ReadTimeout > 0 {
		header = min(header, cfg.ReadTimeout)
	}
	none := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return &http.Server{
		Handler:                      h,
		ReadHeaderTimeout:            header,
		ReadTimeout:                  cfg.ReadTimeout,
		WriteTimeout:                 cfg.WriteTimeout,
		IdleTimeout:                  none(cfg.IdleTimeout),
		DisableGeneralOptionsHandler: true,
	}
}

// writeAddr writes the listening address to path, atomically, so that a
// reader never sees half of it.
func writeAddr(path, addr string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".addr-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(addr + "\n"); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// serverWide says who sees the console's server-wide figures: everyone
// without tokens, only an admin with them.
func serverWide(tokens bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if !tokens {
			return true
		}
		id, ok := auth.FromContext(r.Context())
		return ok && id.Role == auth.RoleAdmin
	}
}
