package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/jobledger/jobledger/wire"
)

// Fixed problem details of the middleware's answers.
const (
	// DetailUnauthorized answers a request without a token, with a token
	// the key set does not hold, and with an Authorization that is not one
	// bearer token: the same body for all, so that it tells nothing of
	// which tokens exist.
	DetailUnauthorized = "a valid bearer token is required"
	// DetailForbidden answers a known token whose role may not do what
	// the request asks.
	DetailForbidden = "the token's role may not do this"
)

// challenge is the WWW-Authenticate of every 401 (RFC 6750 §3).
const challenge = `Bearer realm="jobledger"`

// maxTokenLen bounds the token read from a header; a longer one is
// refused unhashed.
const maxTokenLen = 1024

// Middleware answers 401 or 403 to a request its key set does not let
// through, and passes the others to the handler it wraps, with the
// caller's Identity in the request's context. Safe for concurrent use.
type Middleware struct {
	next http.Handler
	keys atomic.Pointer[Keys]
}

// New wraps next with keys, which must not be nil.
func New(next http.Handler, keys *Keys) *Middleware {
	m := &Middleware{next: next}
	m.keys.Store(keys)
	return m
}

// SetKeys replaces the key set: a request that arrives once it returns is
// checked against keys alone. A request already let through goes on.
func (m *Middleware) SetKeys(keys *Keys) { m.keys.Store(keys) }

// Keys returns the key set in use.
func (m *Middleware) Keys() *Keys { return m.keys.Load() }

// ServeHTTP checks r's token against what its route needs (Needs), then
// serves it with next.
func (m *Middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	keys := m.keys.Load()
	need := Needs(r)
	if need == NeedNothing || (need == NeedMetrics && !keys.GuardsMetrics()) {
		m.next.ServeHTTP(w, r)
		return
	}
	token, ok := bearer(r.Header)
	var id Identity
	if ok {
		id, ok = keys.Lookup(token)
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", challenge)
		writeProblem(w, http.StatusUnauthorized, DetailUnauthorized)
		return
	}
	if !id.Role.May(need) {
		writeProblem(w, http.StatusForbidden, DetailForbidden)
		return
	}
	m.next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id)))
}

// bearer returns the token of h's one Authorization field, if it is
// "Bearer TOKEN" (the scheme in any case, RFC 9110 §11.1) with TOKEN of
// RFC 6750's b64token characters.
func bearer(h http.Header) (string, bool) {
	vals := h.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || len(token) > maxTokenLen {
		return "", false
	}
	// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
	end := len(strings.TrimRight(token, "="))
	if end == 0 {
		return "", false
	}
	for i := 0; i < end; i++ {
		c := token[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			return "", false
		}
	}
	return token, true
}

// writeProblem writes an application/problem+json reply, as the API
// writes its own.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	data, _ := json.Marshal(wire.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}) // always marshals
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(append(data, '\n')) // the client went away
}

type ctxKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the Identity the middleware let the request through
// with, and false when it carries none (no middleware, or a route that
// needs no token).
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id, ok
}
