package jobapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/auth"
)

// TestAuthAnswersEveryRoute drives the 401 and 403 that contractCodes
// lists: behind package auth's middleware, with a token file that guards
// /metrics, every operation but /healthz's answers 401 without a token and
// 403 to a token whose role may not use it.
func TestAuthAnswersEveryRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, echoConfig)
	sub, subLine, err := auth.NewToken("acme", auth.RoleSubmit)
	require.NoError(t, err)
	met, metLine, err := auth.NewToken("prom", auth.RoleMetrics)
	require.NoError(t, err)
	keys, err := auth.Parse(strings.NewReader(subLine + "\n" + metLine))
	require.NoError(t, err)
	mw := auth.New(h.srv, keys)

	answers := map[string][]int{} // "path method" -> codes
	for pattern, methods := range jobapi.Routes(h.srv) {
		path := strings.ReplaceAll(pattern, "{id}", "nosuchjob")
		for _, m := range methods {
			op := pattern + " " + strings.ToLower(m)
			wrongRole := met
			if pattern == "/metrics" {
				wrongRole = sub
			}
			for _, token := range []string{"", wrongRole} {
				r := httptest.NewRequest(m, path, nil)
				if token != "" {
					r.Header.Set("Authorization", "Bearer "+token)
				}
				w := httptest.NewRecorder()
				mw.ServeHTTP(w, r)
				answers[op] = append(answers[op], w.Code)
			}
		}
	}
	for op, codes := range answers {
		if strings.HasPrefix(op, "/healthz ") {
			require.NotContains(t, codes, http.StatusUnauthorized, op)
			continue
		}
		require.Equal(t, []int{http.StatusUnauthorized, http.StatusForbidden}, codes, op)
		require.Contains(t, contractCodes[op], "401", op)
		require.Contains(t, contractCodes[op], "403", op)
	}
}
