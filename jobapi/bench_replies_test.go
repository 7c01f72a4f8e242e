package jobapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
	"github.com/jobledger/jobledger/jobapi"
)

// resultFixture starts a server whose echo job's result holds pad bytes,
// with the reply budget (or, without, as before it had one), and returns
// it and the result's path.
func resultFixture(b *testing.B, pad int, withBudget bool) (*jobapi.Server, string) {
	b.Helper()
	srv := benchServer(b, nil, nil)
	if !withBudget {
		jobapi.WithoutReplyBudget(srv)
	}
	rec := httptest.NewRecorder()
	body := fmt.Sprintf(`{"params":{"pad":%q}}`, strings.Repeat("x", pad))
	req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	srv.ServeHTTP(rec, req)
	require.Equal(b, http.StatusAccepted, rec.Code, "%s", rec.Body)
	loc, err := req.URL.Parse(rec.Header().Get("Location"))
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, serve(srv, http.MethodGet, loc.Path+"/wait", "").status)
	return srv, loc.Path + "/result"
}

// BenchmarkResultRead compares GET /jobs/{id}/result under the reply
// budget with the same server without one (what a result read cost before
// the budget), handlers called directly, for a small and a 1 MiB result,
// by one goroutine and by GOMAXPROCS at once (the budget is one lock).
// ratio above 1 means the budget costs nothing measurable.
func BenchmarkResultRead(b *testing.B) {
	for _, size := range []struct {
		name string
		pad  int
	}{{"small", 16}, {"1MiB", 1 << 20}} {
		for _, procs := range []int{1, 0} {
			name := size.name + "/serial"
			if procs == 0 {
				name = size.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				call := func(withBudget bool) func() error {
					srv, target := resultFixture(b, size.pad, withBudget)
					return func() error {
						w := &discardWriter{h: http.Header{}}
						srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
						if w.status != 0 && w.status != http.StatusOK {
							return fmt.Errorf("status %d", w.status)
						}
						return nil
					}
				}
				b.ReportAllocs()
				benchcmp.AlternateParallel(b, procs, compareChunk, call(true), call(false))
			})
		}
	}
}
