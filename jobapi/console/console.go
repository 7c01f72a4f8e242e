package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// Prefix is the path the console is served under.
const Prefix = "/console"

// Defaults for the zero fields of Options.
const (
	DefaultRefresh     = 2 * time.Second
	DefaultSampleEvery = 5 * time.Second
	DefaultWindow      = 5 * time.Minute
)

// Options configure a Console. API and Overview are required; every other
// field is optional.
type Options struct {
	// API is the job API's handler (a *jobapi.Server). The console calls it
	// in-process for every job it shows or cancels, with the context and
	// headers of the request it serves.
	API http.Handler
	// Overview reports the server-wide figures: (*jobapi.Server).Overview.
	Overview func() jobapi.Overview
	// Store names the store on the overview, already free of secrets
	// (redact.Store). If left empty, no name is shown.
	Store string
	// Replica is this server's name among the replicas of a shared store.
	// If left empty, none is shown.
	Replica string
	// Leases reports the leases the replicas of a shared store hold:
	// (*jobapi.Server).Leases. If left nil, none are shown.
	Leases func(ctx context.Context) ([]ledger.ReplicaLeases, error)
	// ServerWide reports whether the caller of r may see the server-wide
	// figures (the queue, the rates, the workers, the store); the job
	// counts and pages come from the API, which applies its own rules. If
	// left nil, every caller may.
	ServerWide func(r *http.Request) bool
	// Logger receives the console's own failures (a page that could not
	// be rendered). If left nil, slog.Default() does.
	Logger *slog.Logger
	// Now gives the time of the samples. If left nil, the wall clock does.
	Now func() time.Time
	// Refresh is how often an open overview polls for fresh figures. If
	// left zero, DefaultRefresh.
	Refresh time.Duration
	// SampleEvery is how often the counters are sampled for the plots, and
	// Window how far back the plots reach. If left zero, DefaultSampleEvery
	// and DefaultWindow.
	SampleEvery, Window time.Duration

	_ struct{} // forbid positional literals
}

// ErrInvalidOptions is New's error for Options it cannot run with.
var ErrInvalidOptions = errors.New("console: invalid options")

//go:embed assets
var assets embed.FS

// Console serves the console's pages. Create it with New and Close it when
// the server stops.
//
// Synchronisation: opts, pages, static, guard and mux are set by New and
// never change; mu guards hist; stop and done are the sampler's.
type Console struct {
	opts   Options
	pages  map[string]*template.Template
	static http.Handler
	guard  *http.CrossOriginProtection
	mux    *http.ServeMux

	mu   sync.Mutex
	hist series

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New returns a Console, with a goroutine that samples the server's
// counters every SampleEvery until Close.
func New(opts Options) (*Console, error) {
	switch {
	case opts.API == nil:
		return nil, errors.Join(ErrInvalidOptions, errors.New("no API"))
	case opts.Overview == nil:
		return nil, errors.Join(ErrInvalidOptions, errors.New("no Overview"))
	case opts.Refresh < 0 || opts.SampleEvery < 0 || opts.Window < 0:
		return nil, errors.Join(ErrInvalidOptions, errors.New("a negative duration"))
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Refresh = cmpOr(opts.Refresh, DefaultRefresh)
	opts.SampleEvery = cmpOr(opts.SampleEvery, DefaultSampleEvery)
	opts.Window = cmpOr(opts.Window, DefaultWindow)
	if opts.Window < 2*opts.SampleEvery {
		return nil, errors.Join(ErrInvalidOptions, errors.New("the window holds fewer than two samples"))
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, pages: pages, guard: http.NewCrossOriginProtection(),
		static: http.StripPrefix(Prefix+"/assets/", http.FileServerFS(static)),
		hist:   series{window: opts.Window},
		stop:   make(chan struct{}), done: make(chan struct{})}
	c.mux = c.routes()
	c.sample()
	go c.sampler()
	return c, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Close stops the sampler and waits for it; the pages go on being served.
func (c *Console) Close() error {
	c.closeOnce.Do(func() { close(c.stop) })
	<-c.done
	return nil
}

// sampler samples the counters every SampleEvery until Close.
func (c *Console) sampler() {
	defer close(c.done)
	t := time.NewTicker(c.opts.SampleEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.sample()
		}
	}
}

// sample records the counters now.
func (c *Console) sample() {
	o := c.opts.Overview()
	x := sample{at: c.opts.Now(), submitted: o.Submitted, rejected: o.Rejected,
		done: o.Done, failed: o.Failed + o.TimedOut}
	c.mu.Lock()
	c.hist.add(x)
	c.mu.Unlock()
}

// Mount returns a handler that serves /console and the paths under it with
// c, and every other request with api.
func Mount(api http.Handler, c *Console) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Owns(r.URL.Path) {
			c.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// Owns reports whether p is the console's: /console or a path under it,
// in its clean form (an unclean one is left to the API, which refuses it).
func Owns(p string) bool {
	if p != Prefix && !strings.HasPrefix(p, Prefix+"/") {
		return false
	}
	clean := path.Clean(p)
	return clean == p || clean+"/" == p
}

// ServeHTTP serves the console, every reply with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// contentSecurityPolicy lets a page load its style sheet, script and
// images from the server and talk only to it: no inline script or style,
// no other origin, no frames, forms that post only to the server.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// routes builds the console's mux.
func (c *Console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix, c.overview)
	mux.HandleFunc("GET "+Prefix+"/{$}", c.overview)
	mux.HandleFunc("GET "+Prefix+"/jobs", c.jobs)
	mux.HandleFunc("GET "+Prefix+"/jobs/{id}", c.job)
	mux.HandleFunc("GET "+Prefix+"/jobs/{id}/cancel", c.confirmCancel)
	mux.Handle("POST "+Prefix+"/jobs/{id}/cancel", c.guard.Handler(http.HandlerFunc(c.cancel)))
	mux.HandleFunc("GET "+Prefix+"/assets/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		c.static.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET "+Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusNotFound, "There is no such page in the console.")
	})
	return mux
}
