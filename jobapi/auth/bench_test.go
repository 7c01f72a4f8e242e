package auth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jobledger/jobledger/jobapi/auth"
)

// BenchmarkMiddleware is the cost of a request let through with a token,
// beside the same request served with no middleware, for key sets of a
// few and of many tokens.
func BenchmarkMiddleware(b *testing.B) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, n := range []int{1, 10000} {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = digest(fmt.Sprint("tok-", i)) + " acme"
		}
		keys, err := auth.Parse(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			b.Fatal(err)
		}
		for _, side := range []struct {
			name string
			h    http.Handler
		}{{"bare", ok}, {"auth", auth.New(ok, keys)}} {
			b.Run(fmt.Sprintf("tokens=%d/%s", n, side.name), func(b *testing.B) {
				r := httptest.NewRequest("POST", "/jobs", nil)
				r.Header.Set("Authorization", "Bearer tok-0")
				w := httptest.NewRecorder()
				for b.Loop() {
					side.h.ServeHTTP(w, r)
				}
			})
		}
	}
}
