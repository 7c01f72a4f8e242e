package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jobledger/jobledger/internal/redact"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
	"github.com/jobledger/jobledger/store/sqlite"
)

// storeKind is one form the config key "store" accepts: NAME for a store
// that needs nothing more, NAME:PATH for one kept in a file, NAME://...
// for a database URL (the whole value is its open's path).
type storeKind struct {
	form string // as docs/http.md writes it
	path bool   // the form is NAME:PATH
	url  bool   // the form is NAME://..., a URL passed whole
	// durable: the store keeps its jobs across a restart, so a job still
	// PENDING at shutdown is left for the next process (Recovered) rather
	// than ended.
	durable bool
	// open opens the store at path, with the ledger's configuration lcfg
	// and the server's cfg for what is the store's own (replica, lease),
	// logging to log what the store logs.
	open func(path string, cfg config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error)
}

// storeKinds are the stores the binary can open, by name. A durable store
// is one more entry: it opens a ledger.Ledger[[]byte, []byte] at path and
// returns it wrapped by ledger.WithCodecs with jobapi's codecs.
var storeKinds = map[string]storeKind{
	"memory": {form: "memory", open: func(_ string, _ config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
		return ledger.NewMemory[jobapi.Request, json.RawMessage](lcfg)
	}},
	"sqlite": {form: "sqlite:PATH", path: true, durable: true, open: func(path string, _ config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
		st, err := sqlite.Open(context.Background(), path, lcfg, sqlite.Options{})
		if err != nil {
			return nil, err
		}
		return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), nil
	}},
	"postgres":   postgresKind("postgres"),
	"postgresql": postgresKind("postgresql"),
}

// postgresKind is the PostgreSQL store under the URL scheme scheme: the
// ledger in the database the URL names, shared with every server that
// names it, each under its replica name (config.Replica) and with its
// lease (config.Lease).
func postgresKind(scheme string) storeKind {
	return storeKind{form: scheme + "://...", url: true, durable: true, open: func(dsn string, cfg config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], error) {
		log = slog.New(redact.Handler{H: log.Handler()}) // its lines may quote dsn
		st, err := postgres.Open(context.Background(), dsn, lcfg, postgres.Options{Replica: cfg.Replica, Lease: cfg.Lease, Logger: log})
		if err != nil {
			return nil, err
		}
		return ledger.WithCodecs(st, jobapi.RequestJSON{}, jobapi.ResultJSON{}), nil
	}}
}

// parseStore reads a value of the key "store" into its kind and path, or
// says which forms are accepted, naming v with its passwords redacted.
func parseStore(v string) (storeKind, string, error) {
	name, path, hasPath := strings.Cut(v, ":")
	k, ok := storeKinds[name]
	switch {
	case !ok:
		return storeKind{}, "", fmt.Errorf("%q is not one of the accepted forms: %s", redact.Store(v), storeForms())
	case k.url && !strings.HasPrefix(path, "//"):
		return storeKind{}, "", fmt.Errorf("%q is not a URL: the form is %s", redact.Store(v), k.form)
	case k.url:
		return k, v, nil
	case k.path && path == "":
		return storeKind{}, "", fmt.Errorf("%q names no file: the form is %s", redact.Store(v), k.form)
	case !k.path && hasPath:
		return storeKind{}, "", fmt.Errorf("%q: %s takes no path", redact.Store(v), name)
	}
	return k, path, nil
}

// storeForms lists the accepted forms, sorted, for messages.
func storeForms() string {
	forms := make([]string, 0, len(storeKinds))
	for _, k := range storeKinds {
		forms = append(forms, k.form)
	}
	slices.Sort(forms)
	return strings.Join(forms, ", ")
}

// openStore opens the store cfg.Store names, configured by lcfg and
// logging to log, and says whether it is durable. A refused lcfg wraps
// ErrInvalidConfig; any other failure (a file that cannot be opened)
// names the store. No message holds the store's passwords (redact.Store).
func openStore(cfg config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[jobapi.Request, json.RawMessage], bool, error) {
	k, path, err := parseStore(cfg.Store)
	if err != nil {
		return nil, false, fmt.Errorf("%w: store: %v", jobapi.ErrInvalidConfig, err)
	}
	l, err := k.open(path, cfg, lcfg, log)
	switch {
	case errors.Is(err, ledger.ErrInvalidConfig):
		return nil, false, fmt.Errorf("%w: %v", jobapi.ErrInvalidConfig, redact.Error{Err: err})
	case err != nil:
		return nil, false, fmt.Errorf("jobapi: opening the store %q: %w", redact.Store(cfg.Store), redact.Error{Err: err})
	}
	return l, k.durable, nil
}
