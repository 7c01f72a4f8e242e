package jobapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/benchcmp"
)

// BenchmarkKeyedReplayServer measures what the server pays for a keyed
// replay against a GET /jobs/{id} of the same job, over loopback, with the
// client's share made small and alike on every side: each side has one
// kept-alive TCP connection to 127.0.0.1 on which the client writes its
// request, prepared in advance as the bytes net/http's client writes for
// it (its request line and header fields, in the order of
// http.Request.Write), and reads the reply by its Content-Length
// (rawConn). The sides, the first the baseline of every ratio:
//
//   - bare-get: GET /jobs/{id} to a bare handler that writes the GET's
//     bytes, prepared in advance;
//   - bare-get-fields: the same GET with two of the replay's header
//     fields, Content-Type and Idempotency-Key (the third,
//     Content-Length, comes with the body);
//   - bare-post: the replay's request, with its body, to a bare handler
//     that reads the body and writes the replay's 202, prepared in advance;
//   - get and replay: the same two requests through the API.
//
// Each side's wall time (NAME-ns/op, NAME-ratio) and the CPU time the
// whole process used while it ran (NAME-cpu-ns/op, NAME-cpu-ratio) are
// reported; server-ratio is the API's GET time over its replay time, and
// server-cpu-ratio the same in CPU time: at or above 1, a replay costs the
// server no more than a GET.
func BenchmarkKeyedReplayServer(b *testing.B) {
	api, bareGet, barePost, body, target := replayServers(b)

	getReq := rawRequest(b, http.MethodGet, target, "", false)
	fieldsReq := rawRequest(b, http.MethodGet, target, "", true)
	replayReq := rawRequest(b, http.MethodPost, "/jobs", body, true)
	side := func(name string, ts *httptest.Server, req []byte, want int) benchcmp.Side {
		c := dialRaw(b, ts)
		return benchcmp.Side{Name: name, Op: func() error { return c.roundTrip(req, want) }}
	}
	n, took, used := benchcmp.AlternateSidesCPU(b, 1, compareChunk,
		side("bare-get", bareGet, getReq, http.StatusOK),
		side("bare-get-fields", bareGet, fieldsReq, http.StatusOK),
		side("bare-post", barePost, replayReq, http.StatusAccepted),
		side("get", api, getReq, http.StatusOK),
		side("replay", api, replayReq, http.StatusAccepted),
	)
	const get, replay = 3, 4
	b.ReportMetric(float64(took[get])/float64(took[replay]), "server-ratio")
	b.ReportMetric(float64(used[get])/float64(used[replay]), "server-cpu-ratio")
	b.ReportMetric(float64(took[replay]-took[get])/float64(n), "server-extra-ns/op")
}

// BenchmarkKeyedReplayClient splits BenchmarkKeyedReplay's gap between the
// two ends: the API's GET /jobs/{id} and its keyed replay, each sent both
// by net/http's client (as BenchmarkKeyedReplay sends them) and as
// prepared bytes on a raw connection (as BenchmarkKeyedReplayServer sends
// them), alternating in one run. The server does the same work for a
// request either way, so what the replay costs more than the GET on the
// raw connection is the server's share (server-extra-ns/op), and what it
// costs more with net/http's client, less that, is the client's
// (client-extra-ns/op); the same two in CPU time end in -cpu-ns/op.
// raw-ratio and http-ratio are GET time over replay time with each client.
func BenchmarkKeyedReplayClient(b *testing.B) {
	srv, body, target := replayFixture(b)
	api := httptest.NewServer(srv)
	defer api.Close()
	getReq := rawRequest(b, http.MethodGet, target, "", false)
	replayReq := rawRequest(b, http.MethodPost, "/jobs", body, true)
	raw := func(name string, req []byte, want int) benchcmp.Side {
		c := dialRaw(b, api)
		return benchcmp.Side{Name: name, Op: func() error { return c.roundTrip(req, want) }}
	}
	viaClient := func(name string, keyed bool, want int) benchcmp.Side {
		do := clientOp(api, body, target, keyed, want)
		return benchcmp.Side{Name: name, Op: do}
	}
	// The order reverses every other round, so each side follows the sides
	// beside it: the two raw sides each follow the other and the side of
	// net/http's client that sends its request, and the two sides of
	// net/http's client each follow themselves and that raw side. The GET
	// and the replay thus sit in mirror places, and what a side leaves
	// behind (garbage, a goroutine still running) weighs alike on them.
	n, took, used := benchcmp.AlternateSidesCPU(b, 1, compareChunk,
		viaClient("http-get", false, http.StatusOK),
		raw("raw-get", getReq, http.StatusOK),
		raw("raw-replay", replayReq, http.StatusAccepted),
		viaClient("http-replay", true, http.StatusAccepted),
	)
	const httpGet, rawGet, rawReplay, httpReplay = 0, 1, 2, 3
	b.ReportMetric(float64(took[rawGet])/float64(took[rawReplay]), "raw-ratio")
	b.ReportMetric(float64(took[httpGet])/float64(took[httpReplay]), "http-ratio")
	for _, t := range []struct {
		unit string
		d    []time.Duration
	}{{"ns/op", took}, {"cpu-ns/op", used}} {
		server := t.d[rawReplay] - t.d[rawGet]
		b.ReportMetric(float64(server)/float64(n), "server-extra-"+t.unit)
		b.ReportMetric(float64(t.d[httpReplay]-t.d[httpGet]-server)/float64(n), "client-extra-"+t.unit)
	}
}

// rawRequest is the request net/http's client writes for method, target
// and body (none when ""), with the replay's Content-Type and
// Idempotency-Key when keyed, and the Accept-Encoding its Transport adds.
func rawRequest(b *testing.B, method, target, body string, keyed bool) []byte {
	b.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1"+target, strings.NewReader(body))
	require.NoError(b, err)
	if body == "" {
		req.Body, req.GetBody = http.NoBody, nil
	}
	if keyed {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "bench-key")
	}
	req.Header.Set("Accept-Encoding", "gzip")
	var buf bytes.Buffer
	require.NoError(b, req.Write(&buf))
	return buf.Bytes()
}

// rawConn is a kept-alive HTTP/1.1 connection on which a benchmark writes
// requests as prepared bytes and reads each reply with as little work as
// HTTP allows: the status line, the header fields up to the blank line
// (only Content-Length is looked at), and that many bytes of body. One
// goroutine uses it at a time.
type rawConn struct {
	conn net.Conn
	rd   *bufio.Reader
}

// dialRaw opens a rawConn to ts, closed when the benchmark ends.
func dialRaw(b *testing.B, ts *httptest.Server) *rawConn {
	b.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	require.NoError(b, err)
	b.Cleanup(func() { _ = conn.Close() })
	return &rawConn{conn: conn, rd: bufio.NewReaderSize(conn, 4096)}
}

var contentLengthField = []byte("content-length:")

// roundTrip writes req and reads its reply, which must have status want
// and a Content-Length.
func (c *rawConn) roundTrip(req []byte, want int) error {
	if _, err := c.conn.Write(req); err != nil {
		return err
	}
	line, err := c.rd.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 12 || string(line[9:12]) != strconv.Itoa(want) {
		return fmt.Errorf("status line %q", line)
	}
	length := -1
	for range 64 { // header fields: net/http writes five or six here
		line, err = c.rd.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 { // the blank line
			if length < 0 {
				return fmt.Errorf("no Content-Length")
			}
			_, err = c.rd.Discard(length)
			return err
		}
		if len(line) > len(contentLengthField) && bytes.EqualFold(line[:len(contentLengthField)], contentLengthField) {
			length, err = strconv.Atoi(string(bytes.TrimSpace(line[len(contentLengthField):])))
			if err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("more than 64 header fields")
}
