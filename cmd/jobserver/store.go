package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jobledger/jobledger/cmd/jobserver/internal/config"
	"github.com/jobledger/jobledger/internal/redact"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
	"github.com/jobledger/jobledger/store/sqlite"
)

// opener opens a store at path, with the ledger's configuration lcfg and
// the server's cfg for what is the store's own (replica, lease), logging
// to log what the store logs.
type opener func(path string, cfg config.Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error)

// openers open each of config.StoreKinds, by name. A durable store is
// one more entry: it opens a ledger.Ledger[[]byte, []byte] at path and
// returns it wrapped by ledger.WithCodecs with jobapi's codecs.
var openers = map[string]opener{
	"memory": func(_ string, _ config.Config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
		return ledger.NewMemory[jobapi.Request, json.RawMessage](lcfg)
	},
	"sqlite": func(path string, _ config.Config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
		st, err := sqlite.Open(context.Background(), path, lcfg, sqlite.Options{})
		if err != nil {
			return nil, err
		}
		return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), nil
	},
	"postgres":   openPostgres,
	"postgresql": openPostgres,
}

// openPostgres opens the ledger in the database the URL dsn names, shared
// with every server that names it, each under its replica name
// (Config.Replica) and with its lease (Config.Lease).
func openPostgres(dsn string, cfg config.Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
	log = slog.New(redact.Handler{H: log.Handler()}) // its lines may quote dsn
	st, err := postgres.Open(context.Background(), dsn, lcfg, postgres.Options{Replica: cfg.Replica, Lease: cfg.Lease, Logger: log})
	if err != nil {
		return nil, err
	}
	return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), nil
}

// A job's stored request, no longer than its body but for the escapes of
// its task id, is written with the id, the task id and an idempotency key
// in one write of the SQLite store: the ceiling of max_body_bytes is at
// most half the most bytes that write takes. The constant fails to
// compile otherwise.
const _ = uint64(sqlite.MaxValueBytes/2 - jobapi.MaxBodyBytesCeiling)

// openStore opens the store cfg.Store names, configured by lcfg and
// logging to log, and says whether it is durable. A refused lcfg wraps
// ErrInvalidConfig; any other failure (a file that cannot be opened)
// names the store. No message holds the store's passwords (redact.Store).
func openStore(cfg config.Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], bool, error) {
	k, path, err := config.ParseStore(cfg.Store)
	if err != nil {
		return nil, false, fmt.Errorf("%w: store: %v", jobapi.ErrInvalidConfig, err)
	}
	l, err := openers[k.Name](path, cfg, lcfg, log)
	switch {
	case errors.Is(err, ledger.ErrInvalidConfig):
		return nil, false, fmt.Errorf("%w: %v", jobapi.ErrInvalidConfig, redact.Error{Err: err})
	case err != nil:
		return nil, false, fmt.Errorf("jobapi: opening the store %q: %w", redact.Store(cfg.Store), redact.Error{Err: err})
	}
	return l, k.Durable, nil
}
