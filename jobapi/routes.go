package jobapi

import (
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// route is one path of the API: its handlers by method, and whether it
// belongs to the asynchronous API (503 when Config.AsyncEnabled is false;
// Cache-Control: no-store on every reply, since each tells a job's state).
type route struct {
	pattern string // ServeMux pattern, and the "route" label of the metrics
	methods map[string]http.HandlerFunc
	async   bool
	// hold is the longest the handler may hold a request before it
	// replies: max_wait for a wait. The write deadline is moved that much
	// later (holdWriteDeadline) before the handler runs. /infer has none
	// here: its deadline counts from the end of its body, so it moves its
	// write deadline itself once the body is read (handler_infer.go).
	hold time.Duration
}

// routeTable lists the API. docs/openapi.yaml is checked against it. Every
// GET route answers HEAD with the GET handler (RFC 9110 §9.3.2): net/http
// sends the headers and drops the body.
func (s *Server) routeTable() []route {
	rts := []route{
		{pattern: "/jobs", async: true, methods: map[string]http.HandlerFunc{
			http.MethodPost: s.postJob, http.MethodGet: s.listJobs}},
		{pattern: "/jobs/{id}", async: true, methods: map[string]http.HandlerFunc{http.MethodGet: s.getJob}},
		{pattern: "/jobs/{id}/wait", async: true, hold: s.cfg.MaxWait,
			methods: map[string]http.HandlerFunc{http.MethodGet: s.waitJob}},
		{pattern: "/jobs/{id}/result", async: true, methods: map[string]http.HandlerFunc{http.MethodGet: s.getResult}},
		{pattern: "/jobs/{id}/cancel", async: true, methods: map[string]http.HandlerFunc{http.MethodPost: s.cancel}},
		{pattern: "/infer", methods: map[string]http.HandlerFunc{http.MethodPost: s.infer}},
		{pattern: "/healthz", methods: map[string]http.HandlerFunc{http.MethodGet: s.healthz}},
		{pattern: "/metrics", methods: map[string]http.HandlerFunc{
			http.MethodGet: promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP,
		}},
	}
	for _, rt := range rts {
		if get, ok := rt.methods[http.MethodGet]; ok {
			rt.methods[http.MethodHead] = get
		}
	}
	return rts
}

// serverAllow is the Allow of OPTIONS *: every method some route accepts,
// and OPTIONS itself.
func (s *Server) serverAllow() string {
	set := map[string]bool{http.MethodOptions: true}
	for _, rt := range s.routeTable() {
		for m := range rt.methods {
			set[m] = true
		}
	}
	return joinMethods(set)
}

// joinMethods is the Allow value of a set of methods, sorted.
func joinMethods[V any](set map[string]V) string {
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// routeUnmatched is the "route" label of the requests no route matches.
const routeUnmatched = "unmatched"

// routes builds the mux. Methods are dispatched here rather than by the
// mux's "METHOD /path" patterns, so that a wrong method is answered with a
// problem body like every other error; every reply is counted by route.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range s.routeTable() {
		mux.Handle(rt.pattern, s.counted(rt.pattern, s.dispatch(rt)))
	}
	mux.Handle("/", s.counted(routeUnmatched, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusNotFound, detailNoRoute, nil)
	})))
	return mux
}

// dispatch calls the handler of r's method, or answers 405 with Allow.
func (s *Server) dispatch(rt route) http.Handler {
	allow := joinMethods(rt.methods)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.async {
			// A job's state changes under the client: a cached snapshot,
			// 202 or result would be stale or, once evicted, wrong. Set
			// first, so that every reply of the route carries it, a 405
			// included.
			w.Header().Set("Cache-Control", "no-store")
		}
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
		if rt.hold > 0 {
			holdWriteDeadline(w, r, rt.hold)
		}
		h(w, r)
	})
}

// holdWriteDeadline moves the write deadline of a request that the handler
// may hold for up to hold (a wait, /infer) to hold past the serving
// http.Server's WriteTimeout. net/http counts WriteTimeout from the end of
// the request header, so without this a WriteTimeout under max_wait would
// cut off every long wait's reply. Deadlines of a connection are
// wall-clock time by nature, hence time.Now rather than the server's Clock.
// Outside an http.Server, or with no WriteTimeout, nothing changes.
func holdWriteDeadline(w http.ResponseWriter, r *http.Request, hold time.Duration) {
	hs, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if hs == nil || hs.WriteTimeout <= 0 {
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(addSaturating(hs.WriteTimeout, hold)))
}

// addSaturating is a + b for non-negative a and b, or the largest Duration
// where the sum would overflow. max_wait and async_timeout accept up to
// the largest Duration, and a sum that wrapped round would put the write
// deadline in the past, cutting off every reply it covered. Saturating
// keeps those values meaning what they say, a hold that never runs out in
// practice, where capping them in Validate would refuse configurations
// that are sound.
func addSaturating(a, b time.Duration) time.Duration {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// codeNotWritten is the "code" label of a request that got no reply: its
// client went away (its context ended) before the handler wrote anything,
// and the handler, seeing that, wrote nothing. 499 is nginx's "client
// closed request". Counted as the 200 that net/http would have sent, such
// requests would hide among the replies that were sent.
const codeNotWritten = 499

// counted counts each reply of h in the requests metric under route, and
// each request whose client went away before any reply under
// codeNotWritten.
func (s *Server) counted(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if !rec.wrote && r.Context().Err() != nil {
			rec.status = codeNotWritten
		}
		s.metrics.request(route, rec.status)
	})
}

// statusRecorder remembers the status a handler wrote, and whether it
// wrote anything.
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

// Write is a reply of the status written, or of 200 (net/http's default).
func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
