package auth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi/auth"
	"github.com/jobledger/jobledger/wire"
)

// keysOf parses lines, failing the test on an error.
func keysOf(t *testing.T, lines ...string) *auth.Keys {
	t.Helper()
	k, err := auth.Parse(strings.NewReader(strings.Join(lines, "\n")))
	require.NoError(t, err)
	return k
}

// echoIdentity answers 200 with the identity the middleware passed on.
var echoIdentity = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	id, ok := auth.FromContext(r.Context())
	if !ok {
		w.Write([]byte("anonymous"))
		return
	}
	w.Write([]byte(id.Tenant + "/" + id.Role.String()))
})

// call sends one request through h and returns the recorder.
func call(h http.Handler, method, target, authorization string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// requireProblem checks that w is the problem of status with detail.
func requireProblem(t *testing.T, w *httptest.ResponseRecorder, status int, detail string) {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	var p wire.Problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
	require.Equal(t, wire.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}, p)
	if status == http.StatusUnauthorized {
		require.Equal(t, `Bearer realm="jobledger"`, w.Header().Get("WWW-Authenticate"))
	} else {
		require.Empty(t, w.Header().Get("WWW-Authenticate"))
	}
}

func TestMiddlewareRefusesEachWayIn(t *testing.T) {
	keys := keysOf(t,
		digest("sub")+" acme",
		digest("adm")+" ops role=admin",
		digest("met")+" prom role=metrics")
	h := auth.New(echoIdentity, keys)
	const (
		ok    = http.StatusOK
		unath = http.StatusUnauthorized
		forb  = http.StatusForbidden
	)
	type want struct{ none, sub, adm, met int }
	for _, tc := range []struct {
		method, target string
		want           want
	}{
		{"GET", "/healthz", want{ok, ok, ok, ok}},
		{"HEAD", "/healthz", want{ok, ok, ok, ok}},
		{"GET", "/metrics", want{unath, forb, ok, ok}},
		{"POST", "/jobs", want{unath, ok, ok, forb}},
		{"GET", "/jobs", want{unath, forb, ok, forb}},
		{"HEAD", "/jobs?state=DONE", want{unath, forb, ok, forb}},
		{"GET", "/%6Aobs", want{unath, forb, ok, forb}}, // the path as the mux reads it
		{"GET", "/jobs/abc", want{unath, ok, ok, forb}},
		{"GET", "/jobs/abc/wait?timeout=0", want{unath, ok, ok, forb}},
		{"GET", "/jobs/abc/result", want{unath, ok, ok, forb}},
		{"POST", "/jobs/abc/cancel", want{unath, ok, ok, forb}},
		{"POST", "/infer", want{unath, ok, ok, forb}},
		{"GET", "/no/such/route", want{unath, ok, ok, forb}},
		{"OPTIONS", "*", want{unath, ok, ok, forb}},
	} {
		for _, c := range []struct {
			token string
			want  int
			id    string
		}{{"", tc.want.none, ""}, {"sub", tc.want.sub, "acme/submit"}, {"adm", tc.want.adm, "ops/admin"}, {"met", tc.want.met, "prom/metrics"}} {
			authz := ""
			if c.token != "" {
				authz = "Bearer " + c.token
			}
			w := call(h, tc.method, tc.target, authz)
			switch c.want {
			case ok:
				require.Equal(t, ok, w.Code, "%s %s as %q", tc.method, tc.target, c.token)
				body := w.Body.String()
				if auth.Needs(httptest.NewRequest(tc.method, tc.target, nil)) == auth.NeedNothing {
					require.Equal(t, "anonymous", body, "an open route passes no identity on")
				} else if tc.method != http.MethodHead {
					require.Equal(t, c.id, body, "%s %s as %q", tc.method, tc.target, c.token)
				}
			case unath:
				requireProblem(t, w, unath, auth.DetailUnauthorized)
			case forb:
				requireProblem(t, w, forb, auth.DetailForbidden)
			}
		}
	}
}

// TestMiddlewareUnknownLikeMissing: every refused token gets the body and
// headers of a request with none, whatever is wrong with it.
func TestMiddlewareUnknownLikeMissing(t *testing.T) {
	h := auth.New(echoIdentity, keysOf(t, digest("sub")+" acme"))
	missing := call(h, "POST", "/jobs", "")
	requireProblem(t, missing, http.StatusUnauthorized, auth.DetailUnauthorized)
	for _, authz := range []string{
		"Bearer other",
		"Bearer " + digest("sub"), // the file's digest is no token
		"Bearer SUB",
		"Bearer sub extra",
		"Bearer  ",
		"Basic c3ViOg==",
		"Bearersub",
		"sub",
		"Bearer sub\x00",
		"Bearer ====",
		"Bearer " + strings.Repeat("a", 1025),
	} {
		w := call(h, "POST", "/jobs", authz)
		require.Equal(t, missing.Code, w.Code, "%q", authz)
		require.Equal(t, missing.Header(), w.Header(), "%q", authz)
		require.Equal(t, missing.Body.String(), w.Body.String(), "%q", authz)
	}
	for _, authz := range []string{"Bearer sub", "bearer sub", "BEARER   sub"} {
		require.Equal(t, http.StatusOK, call(h, "POST", "/jobs", authz).Code, "%q", authz)
	}
	r := httptest.NewRequest("POST", "/jobs", nil)
	r.Header.Add("Authorization", "Bearer sub")
	r.Header.Add("Authorization", "Bearer sub")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, missing.Body.String(), w.Body.String(), "two Authorization fields")
}

func TestMiddlewareMetricsOpenWithoutMetricsLine(t *testing.T) {
	h := auth.New(echoIdentity, keysOf(t, digest("sub")+" acme"))
	w := call(h, "GET", "/metrics", "")
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "anonymous", w.Body.String())
	w = call(h, "GET", "/metrics", "Bearer wrong")
	require.Equal(t, http.StatusOK, w.Code, "an open route ignores the header")
}

// TestSetKeysRevokesAtOnce: once SetKeys returns, a token the new set
// lacks is refused and one it adds is let through; the old set's other
// tokens keep working.
func TestSetKeysRevokesAtOnce(t *testing.T) {
	h := auth.New(echoIdentity, keysOf(t, digest("old")+" acme", digest("kept")+" acme role=admin"))
	require.Equal(t, http.StatusOK, call(h, "POST", "/jobs", "Bearer old").Code)
	require.Equal(t, http.StatusUnauthorized, call(h, "POST", "/jobs", "Bearer new").Code)

	h.SetKeys(keysOf(t, digest("kept")+" acme role=admin", digest("new")+" beta"))
	requireProblem(t, call(h, "POST", "/jobs", "Bearer old"), http.StatusUnauthorized, auth.DetailUnauthorized)
	require.Equal(t, "acme/admin", call(h, "GET", "/jobs", "Bearer kept").Body.String())
	require.Equal(t, "beta/submit", call(h, "POST", "/jobs", "Bearer new").Body.String())

	h.SetKeys(keysOf(t, digest("kept")+" acme"))
	requireProblem(t, call(h, "GET", "/jobs", "Bearer kept"), http.StatusForbidden, auth.DetailForbidden)
}

// FuzzAuthorization sends arbitrary Authorization values: the answer is
// 200 for the one token the set holds, written in any case of "Bearer"
// with any spaces after it, and otherwise exactly the 401 of a request
// with none.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"", "Bearer sub", "bearer sub", "Bearer  sub", "Bearer sub=", "Bearer " + digest("sub"),
		"Basic x", "Bearer", "Bearer ", "Bearer\tsub", "Bearer sub\t", "Bearer s%75b"} {
		f.Add(s)
	}
	keys, err := auth.Parse(strings.NewReader(digest("sub") + " acme"))
	if err != nil {
		f.Fatal(err)
	}
	h := auth.New(echoIdentity, keys)
	missing := call(h, "POST", "/jobs", "")
	f.Fuzz(func(t *testing.T, authz string) {
		r := httptest.NewRequest("POST", "/jobs", nil)
		r.Header["Authorization"] = []string{authz}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		scheme, rest, _ := strings.Cut(authz, " ")
		if strings.EqualFold(scheme, "Bearer") && strings.TrimLeft(rest, " ") == "sub" {
			require.Equal(t, http.StatusOK, w.Code, "%q", authz)
			require.Equal(t, "acme/submit", w.Body.String())
			return
		}
		require.Equal(t, missing.Code, w.Code, "%q", authz)
		require.Equal(t, missing.Header(), w.Header(), "%q", authz)
		require.Equal(t, missing.Body.String(), w.Body.String(), "%q", authz)
	})
}
