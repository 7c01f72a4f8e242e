package jobapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
)

// BenchmarkKeyedReplayWire puts BenchmarkKeyedReplay beside the floor that
// HTTP sets under it: over loopback, with one keep-alive client each, a
// GET /jobs/{id} and a keyed replay through the API, and two bare handlers
// that do no work beyond the wire's: one answers the GET with the same
// bytes, prepared in advance, the other reads the replay's body (its same
// request line, header fields and bytes) and answers with the replay's 202
// (its Location and body, prepared in advance). The first side, the bare
// GET, is the baseline of every ratio, so get-ratio / replay-ratio is
// BenchmarkKeyedReplay's ratio, and bare-post-ratio is the most it could
// be: what a POST with a body and two more header fields costs over a GET
// before any handler runs.
func BenchmarkKeyedReplayWire(b *testing.B) {
	srv, body, target := replayFixture(b)
	snapshot := httptest.NewRecorder()
	srv.ServeHTTP(snapshot, httptest.NewRequest(http.MethodGet, target, nil))
	require.Equal(b, http.StatusOK, snapshot.Code)
	accepted := httptest.NewRecorder()
	post := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Idempotency-Key", "bench-key")
	srv.ServeHTTP(accepted, post)
	require.Equal(b, http.StatusAccepted, accepted.Code)
	location, acceptedBody := accepted.Header().Get("Location"), accepted.Body.Bytes()

	api := httptest.NewServer(srv)
	defer api.Close()
	bareGet := httptest.NewServer(bareHandler(snapshot.Body.Bytes()))
	defer bareGet.Close()
	barePost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Location", location)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write(acceptedBody) //nolint:errcheck
	}))
	defer barePost.Close()

	do := func(ts *httptest.Server, keyed bool, want int) func() error {
		client := ts.Client()
		return func() error {
			req, err := http.NewRequest(http.MethodGet, ts.URL+target, nil)
			if keyed {
				req, err = http.NewRequest(http.MethodPost, ts.URL+"/jobs", strings.NewReader(body))
			}
			if err != nil {
				return err
			}
			if keyed {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", "bench-key")
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	benchcmp.AlternateSides(b, 1, compareChunk,
		benchcmp.Side{Name: "bare-get", Op: do(bareGet, false, http.StatusOK)},
		benchcmp.Side{Name: "get", Op: do(api, false, http.StatusOK)},
		benchcmp.Side{Name: "replay", Op: do(api, true, http.StatusAccepted)},
		benchcmp.Side{Name: "bare-post", Op: do(barePost, true, http.StatusAccepted)},
	)
}
