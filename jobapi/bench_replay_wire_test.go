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
// GET, is the baseline of every ratio (bare GET time / that side's time),
// so replay-ratio / get-ratio is BenchmarkKeyedReplay's ratio (GET time /
// replay time), and bare-post-ratio is the most it could be: what a POST
// with a body and two more header fields costs over a GET before any
// handler runs.
func BenchmarkKeyedReplayWire(b *testing.B) {
	api, bareGet, barePost, body, target := replayServers(b)
	benchcmp.AlternateSides(b, 1, compareChunk,
		benchcmp.Side{Name: "bare-get", Op: clientOp(bareGet, body, target, false, http.StatusOK)},
		benchcmp.Side{Name: "get", Op: clientOp(api, body, target, false, http.StatusOK)},
		benchcmp.Side{Name: "replay", Op: clientOp(api, body, target, true, http.StatusAccepted)},
		benchcmp.Side{Name: "bare-post", Op: clientOp(barePost, body, target, true, http.StatusAccepted)},
	)
}

// replayServers starts, over loopback, the API on replayFixture's server
// and the two bare handlers beside it (bareHandler answering the GET with
// its bytes, barePostHandler answering the replay with its 202), all closed
// when b ends, and returns them with the replay's body and the GET's
// target.
func replayServers(b *testing.B) (api, bareGet, barePost *httptest.Server, body, target string) {
	srv, body, target := replayFixture(b)
	snapshot, location, accepted := replayReplies(b, srv, body, target)
	api = httptest.NewServer(srv)
	b.Cleanup(api.Close)
	bareGet = httptest.NewServer(bareHandler(snapshot))
	b.Cleanup(bareGet.Close)
	barePost = httptest.NewServer(barePostHandler(location, accepted))
	b.Cleanup(barePost.Close)
	return api, bareGet, barePost, body, target
}

// replayReplies returns what the API answers, in the fixture of
// replayFixture, to GET target (the snapshot's bytes) and to a replay of
// body under its key (the Location and the bytes of the 202).
func replayReplies(b *testing.B, srv http.Handler, body, target string) ([]byte, string, []byte) {
	b.Helper()
	snapshot := httptest.NewRecorder()
	srv.ServeHTTP(snapshot, httptest.NewRequest(http.MethodGet, target, nil))
	require.Equal(b, http.StatusOK, snapshot.Code)
	accepted := httptest.NewRecorder()
	post := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Idempotency-Key", "bench-key")
	srv.ServeHTTP(accepted, post)
	require.Equal(b, http.StatusAccepted, accepted.Code)
	return snapshot.Body.Bytes(), accepted.Header().Get("Location"), accepted.Body.Bytes()
}

// barePostHandler reads the request's body and answers the replay's 202,
// its Location and body prepared in advance.
func barePostHandler(location string, accepted []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Location", location)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write(accepted)
	})
}

// clientOp is one request to ts by its keep-alive net/http client, built
// anew each time as a client builds it: GET target, or, when keyed, a
// POST /jobs of body under the fixture's Idempotency-Key. The reply must
// have status want.
func clientOp(ts *httptest.Server, body, target string, keyed bool, want int) func() error {
	client := ts.Client()
	return func() error {
		var req *http.Request
		var err error
		if keyed {
			req, err = http.NewRequest(http.MethodPost, ts.URL+"/jobs", strings.NewReader(body))
		} else {
			req, err = http.NewRequest(http.MethodGet, ts.URL+target, nil)
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
