package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobledger/jobledger/internal/redact"
)

// A StoreKind is one form the key "store" accepts: NAME for a store that
// needs nothing more, NAME:PATH for one kept in a file, NAME://... for a
// database URL, passed whole as its path.
type StoreKind struct {
	Name string
	Form string // as docs/http.md writes it
	Path bool   // the form is NAME:PATH
	URL  bool   // the form is NAME://...
	// Durable: the store keeps its jobs across a restart, so a job still
	// PENDING at shutdown is left for the next process rather than ended.
	Durable bool
}

// StoreKinds are the stores the binary can open, by name.
var StoreKinds = map[string]StoreKind{
	"memory":     {Name: "memory", Form: "memory"},
	"sqlite":     {Name: "sqlite", Form: "sqlite:PATH", Path: true, Durable: true},
	"postgres":   {Name: "postgres", Form: "postgres://...", URL: true, Durable: true},
	"postgresql": {Name: "postgresql", Form: "postgresql://...", URL: true, Durable: true},
}

// ParseStore reads a value of the key "store" into its kind and path, or
// says which forms are accepted, naming v with its passwords redacted.
func ParseStore(v string) (StoreKind, string, error) {
	name, path, hasPath := strings.Cut(v, ":")
	k, ok := StoreKinds[name]
	switch {
	case !ok:
		return StoreKind{}, "", fmt.Errorf("%q is not one of the accepted forms: %s", redact.Store(v), storeForms())
	case k.URL && !strings.HasPrefix(path, "//"):
		return StoreKind{}, "", fmt.Errorf("%q is not a URL: the form is %s", redact.Store(v), k.Form)
	case k.URL:
		return k, v, nil
	case k.Path && path == "":
		return StoreKind{}, "", fmt.Errorf("%q names no file: the form is %s", redact.Store(v), k.Form)
	case !k.Path && hasPath:
		return StoreKind{}, "", fmt.Errorf("%q: %s takes no path", redact.Store(v), name)
	}
	return k, path, nil
}

// storeForms lists the accepted forms, sorted, for messages.
func storeForms() string {
	forms := make([]string, 0, len(StoreKinds))
	for _, k := range StoreKinds {
		forms = append(forms, k.Form)
	}
	slices.Sort(forms)
	return strings.Join(forms, ", ")
}
