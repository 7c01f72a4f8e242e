// Command jobserver serves the job API of package jobapi.
//
// Usage:
//
//	jobserver [-config file.json] [flags]
//
// With no flags it serves the fingerprint model on 127.0.0.1:8080. Flags
// override the config file; docs/http.md lists the keys and defaults. On
// SIGINT or SIGTERM it stops accepting connections, gives running jobs
// -grace to finish, ends the rest FAILED "server shutting down", answers
// waiting clients and exits 0.
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
	"syscall"
	"time"

	"github.com/jobledger/jobledger/jobapi"
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
	cfg      jobapi.Config
	addrFile string
	grace    time.Duration
}

func run(args []string, log *slog.Logger) error {
	opts, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	srv, err := jobapi.New(opts.cfg, jobapi.Options{Logger: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.cfg.Listen)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	if opts.addrFile != "" {
		if err := writeAddr(opts.addrFile, addr); err != nil {
			ln.Close()
			return err
		}
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	log.Info("listening", "addr", addr, "model", opts.cfg.Model, "workers", opts.cfg.Workers,
		"async_enabled", opts.cfg.AsyncEnabled, "async_max_queue", opts.cfg.AsyncMaxQueue)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop()
	log.Info("shutting down", "grace", opts.grace.String())
	graceCtx, cancel := context.WithTimeout(context.Background(), opts.grace)
	defer cancel()
	// Stop accepting and end the jobs together: waiting clients are
	// answered as their jobs end, which lets the HTTP server go idle.
	httpDone := make(chan error, 1)
	go func() { httpDone <- httpSrv.Shutdown(graceCtx) }()
	if err := srv.Shutdown(graceCtx); err != nil {
		log.Warn("grace period over; unfinished jobs ended", "error", err)
	}
	if err := <-httpDone; err != nil {
		// The grace period ended with requests in flight. Every job has
		// ended by now, so waiting clients are being answered: give them a
		// short, bounded drain before closing what is left.
		drain, cancelDrain := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelDrain()
		_ = httpSrv.Shutdown(drain)
		httpSrv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
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
