package jobapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// route is one path of the API: its handlers by method, and whether it
// belongs to the asynchronous API (503 when Config.AsyncEnabled is false).
type route struct {
	pattern string // ServeMux pattern, and the "route" label of the metrics
	methods map[string]http.HandlerFunc
	async   bool
}

// routeTable lists the API. docs/openapi.yaml is checked against it.
func (s *Server) routeTable() []route {
	return []route{
		{pattern: "/jobs", async: true, methods: map[string]http.HandlerFunc{http.MethodPost: s.postJob}},
		{pattern: "/jobs/{id}", async: true, methods: map[string]http.HandlerFunc{http.MethodGet: s.getJob}},
		{pattern: "/jobs/{id}/wait", async: true, methods: map[string]http.HandlerFunc{http.MethodGet: s.waitJob}},
		{pattern: "/jobs/{id}/result", async: true, methods: map[string]http.HandlerFunc{http.MethodGet: s.getResult}},
		{pattern: "/jobs/{id}/cancel", async: true, methods: map[string]http.HandlerFunc{http.MethodPost: s.cancel}},
		{pattern: "/infer", methods: map[string]http.HandlerFunc{http.MethodPost: s.infer}},
		{pattern: "/healthz", methods: map[string]http.HandlerFunc{http.MethodGet: s.healthz}},
		{pattern: "/metrics", methods: map[string]http.HandlerFunc{
			http.MethodGet: promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP,
		}},
	}
}

// routes builds the mux. Methods are dispatched here rather than by the
// mux's "METHOD /path" patterns, so that a wrong method is answered with a
// problem body like every other error; every reply is counted by route.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range s.routeTable() {
		mux.Handle(rt.pattern, s.counted(rt.pattern, s.dispatch(rt)))
	}
	mux.Handle("/", s.counted("unmatched", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusNotFound, detailNoRoute, nil)
	})))
	return mux
}

// dispatch calls the handler of r's method, or answers 405 with Allow.
func (s *Server) dispatch(rt route) http.Handler {
	allowed := make([]string, 0, len(rt.methods))
	for m := range rt.methods {
		allowed = append(allowed, m)
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := rt.methods[r.Method]
		if !ok {
			w.Header().Set("Allow", allow)
			writeProblem(w, http.StatusMethodNotAllowed, detailMethod, nil)
			return
		}
		if rt.async && !s.cfg.AsyncEnabled {
			writeProblem(w, http.StatusServiceUnavailable, detailAsyncDisabled, nil)
			return
		}
		h(w, r)
	})
}

// counted counts each reply of h in the requests metric under route.
func (s *Server) counted(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		s.metrics.request(route, rec.status)
	})
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
