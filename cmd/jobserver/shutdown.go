package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/jobledger/jobledger/jobapi"
)

// drainTimeout bounds how long the HTTP server waits, once every job has
// ended, for the requests in flight to be answered.
const drainTimeout = 5 * time.Second

// shutdown stops the server after the first signal, in three steps:
//
//  1. For the grace period the server is read-only. The API refuses new
//     work (POST /jobs and POST /infer: 503 with Retry-After; /healthz 503)
//     but answers snapshots, waits, results, cancels and /metrics, on new
//     connections as on old ones. Admitted jobs run on, and the result of
//     one that ends in the grace can be read by any client until the grace
//     ends, not only by one that was already waiting when the signal came.
//     The jobs live in memory only, so this window is the clients' last
//     chance to read them.
//  2. When the grace ends, the jobs still running end FAILED "server
//     shutting down", and their waiters are answered.
//  3. The HTTP server stops: the listener closes, idle connections close,
//     and the requests in flight get drainTimeout to be answered before
//     their connections are closed.
//
// A further signal on sigs cuts the grace period short.
func shutdown(log *slog.Logger, srv *jobapi.Server, httpSrv *http.Server, sigs <-chan os.Signal, grace time.Duration) {
	log.Info("shutting down", "grace", grace.String())
	graceCtx, cancel := context.WithTimeout(context.Background(), grace)
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		select {
		case <-sigs:
			log.Info("second signal: grace period cut short")
			cancel()
		case <-graceCtx.Done():
		}
	}()
	defer func() { cancel(); <-cut }()

	if err := srv.Shutdown(graceCtx); err != nil {
		log.Warn("grace period over; unfinished jobs ended", "error", err)
	} else {
		log.Info("every job has ended; serving reads until the grace period is over")
		<-graceCtx.Done()
	}

	log.Info("closing the listener", "drain", drainTimeout.String())
	drain, cancelDrain := context.WithTimeout(context.Background(), drainTimeout)
	defer cancelDrain()
	if err := httpSrv.Shutdown(drain); err != nil {
		log.Warn("drain over; closing the connections left", "error", err)
		_ = httpSrv.Close() // its listener is closed: nothing to report
	}
}
