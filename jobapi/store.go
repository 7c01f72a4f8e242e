package jobapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

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
	open func(path string, cfg Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[Request, json.RawMessage], error)
}

// storeKinds are the stores New can open, by name. A durable store is one
// more entry: it opens a ledger.Ledger[[]byte, []byte] at path and returns
// it wrapped by ledger.WithCodecs(l, RequestJSON{}, ResultJSON{}).
var storeKinds = map[string]storeKind{
	"memory": {form: "memory", open: func(_ string, _ Config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[Request, json.RawMessage], error) {
		return ledger.NewMemory[Request, json.RawMessage](lcfg)
	}},
	"sqlite": {form: "sqlite:PATH", path: true, durable: true, open: func(path string, _ Config, lcfg ledger.Config, _ *slog.Logger) (ledger.Ledger[Request, json.RawMessage], error) {
		st, err := sqlite.Open(context.Background(), path, lcfg, sqlite.Options{})
		if err != nil {
			return nil, err
		}
		return ledger.WithCodecs(st, RequestJSON{}, ResultJSON{}), nil
	}},
	"postgres":   postgresKind("postgres"),
	"postgresql": postgresKind("postgresql"),
}

// postgresKind is the PostgreSQL store under the URL scheme scheme: the
// ledger in the database the URL names, shared with every server that
// names it, each under its replica name (Config.Replica) and with its
// lease (Config.Lease).
func postgresKind(scheme string) storeKind {
	return storeKind{form: scheme + "://...", url: true, durable: true, open: func(dsn string, cfg Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[Request, json.RawMessage], error) {
		log = slog.New(redactingHandler{log.Handler()}) // its lines may quote dsn
		st, err := postgres.Open(context.Background(), dsn, lcfg, postgres.Options{Replica: cfg.Replica, Lease: cfg.Lease, Logger: log})
		if err != nil {
			return nil, err
		}
		return ledger.WithCodecs(st, RequestJSON{}, ResultJSON{}), nil
	}}
}

// parseStore reads a value of the key "store" into its kind and path, or
// says which forms are accepted, naming v with its passwords redacted.
func parseStore(v string) (storeKind, string, error) {
	name, path, hasPath := strings.Cut(v, ":")
	k, ok := storeKinds[name]
	switch {
	case !ok:
		return storeKind{}, "", fmt.Errorf("%q is not one of the accepted forms: %s", RedactStore(v), storeForms())
	case k.url && !strings.HasPrefix(path, "//"):
		return storeKind{}, "", fmt.Errorf("%q is not a URL: the form is %s", RedactStore(v), k.form)
	case k.url:
		return k, v, nil
	case k.path && path == "":
		return storeKind{}, "", fmt.Errorf("%q names no file: the form is %s", RedactStore(v), k.form)
	case !k.path && hasPath:
		return storeKind{}, "", fmt.Errorf("%q: %s takes no path", RedactStore(v), name)
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
// names the store. No message holds the store's passwords (RedactStore).
func openStore(cfg Config, lcfg ledger.Config, log *slog.Logger) (ledger.Ledger[Request, json.RawMessage], bool, error) {
	k, path, err := parseStore(cfg.Store)
	if err != nil {
		return nil, false, fmt.Errorf("%w: store: %v", ErrInvalidConfig, err)
	}
	l, err := k.open(path, cfg, lcfg, log)
	switch {
	case errors.Is(err, ledger.ErrInvalidConfig):
		return nil, false, fmt.Errorf("%w: %v", ErrInvalidConfig, redactedError{err})
	case err != nil:
		return nil, false, fmt.Errorf("jobapi: opening the store %q: %w", RedactStore(cfg.Store), redactedError{err})
	}
	return l, k.durable, nil
}

// listenerHealth is what a store whose replicas hear each other through a
// connection of its own (the PostgreSQL store's listener) reports of it,
// found with ledger.As: whether it is connected, since when it is so or
// not, and while it is not, why. While it is down, waits see ends late.
type listenerHealth interface {
	ListenerHealth() (ok bool, since time.Time, err error)
}
