package jobapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/internal/pgtest"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/auth"
)

// tenantFront is h's server behind the token check, with a token for each
// of the lines given as "TENANT ROLE [max_queue=N]".
type tenantFront struct {
	t      *testing.T
	ts     *httptest.Server
	tokens map[string]string // by tenant and role, "a/submit"
}

func newTenantFront(t *testing.T, h *harness, lines ...string) *tenantFront {
	t.Helper()
	f := &tenantFront{t: t, tokens: map[string]string{}}
	var file []string
	for _, l := range lines {
		fields := strings.Fields(l)
		role, err := auth.ParseRole(fields[1])
		require.NoError(t, err)
		token, line, err := auth.NewToken(fields[0], role)
		require.NoError(t, err)
		f.tokens[fields[0]+"/"+fields[1]] = token
		file = append(file, strings.Join(append([]string{line}, fields[2:]...), " "))
	}
	keys, err := auth.Parse(strings.NewReader(strings.Join(file, "\n")))
	require.NoError(t, err)
	f.ts = httptest.NewServer(auth.New(h.srv, keys))
	t.Cleanup(f.ts.Close)
	return f
}

// do sends a request as who ("a/submit") and returns status, content type
// and body.
func (f *tenantFront) do(who, method, path, body string) (int, string, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, bytes.NewReader([]byte(body)))
	require.NoError(f.t, err)
	req.Header.Set("Authorization", "Bearer "+f.tokens[who])
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.ts.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(raw)
}

func (f *tenantFront) submit(who, taskID string) (int, string) {
	f.t.Helper()
	status, _, body := f.do(who, http.MethodPost, "/jobs", `{"task_id":"`+taskID+`"}`)
	return status, body
}

// TestTenantJobHiddenLikeUnknown: on each store, for another tenant's job
// every route that names a job answers exactly as for an id no job has
// (status, content type and body), and the listing leaves it out; its own
// tenant and an admin see it, and the refused cancel changed nothing.
func TestTenantJobHiddenLikeUnknown(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testTenantJobHidden(t, "memory") })
	t.Run("sqlite", func(t *testing.T) {
		testTenantJobHidden(t, "sqlite:"+filepath.Join(t.TempDir(), "jobs.db"))
	})
	t.Run("postgres", func(t *testing.T) { testTenantJobHidden(t, pgtest.NewDatabase(t)) })
}

func testTenantJobHidden(t *testing.T, store string) {
	gate := newGate()
	h := newHarnessStore(t, store, "", jobapi.Options{Model: gate}, nil)
	f := newTenantFront(t, h, "a submit", "b submit", "ops admin")
	status, body := f.submit("a/submit", "mine")
	require.Equal(t, http.StatusAccepted, status, body)
	id := body[strings.Index(body, `"job_id":"`)+10:]
	id = id[:strings.IndexByte(id, '"')]
	<-gate.started

	routes := []struct{ method, path string }{
		{http.MethodGet, "/jobs/%s"},
		{http.MethodGet, "/jobs/%s/wait?timeout=0"},
		{http.MethodGet, "/jobs/%s/result"},
		{http.MethodPost, "/jobs/%s/cancel"},
	}
	for _, r := range routes {
		s1, ct1, b1 := f.do("b/submit", r.method, strings.Replace(r.path, "%s", "NOSUCHJOBNOSUCHJOBNOSUCHJO", 1), "")
		s2, ct2, b2 := f.do("b/submit", r.method, strings.Replace(r.path, "%s", id, 1), "")
		require.Equal(t, http.StatusNotFound, s1, "%s %s: %s", r.method, r.path, b1)
		require.Equal(t, []any{s1, ct1, b1}, []any{s2, ct2, b2}, "%s %s: another tenant's job as an unknown id", r.method, r.path)
	}
	for _, who := range []string{"a/submit", "ops/admin"} {
		status, _, body := f.do(who, http.MethodGet, "/jobs/"+id, "")
		require.Equal(t, http.StatusOK, status, "%s: %s", who, body)
		require.Contains(t, body, `"RUNNING"`, "the refused cancel left it running")
	}
	_, _, list := f.do("b/submit", http.MethodGet, "/jobs", "")
	require.NotContains(t, list, id)
	_, _, list = f.do("a/submit", http.MethodGet, "/jobs", "")
	require.Contains(t, list, id)
	_, _, list = f.do("ops/admin", http.MethodGet, "/jobs", "")
	require.Contains(t, list, id)
	status, _, body = f.do("a/submit", http.MethodPost, "/jobs/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, status, body)
}

// TestTenantBound429: a tenant at its bound gets 429 naming its own
// bound while another tenant is admitted; a full ledger is the queue's
// 429; the token file's max_queue overrides tenant_max_queue; the
// per-tenant metrics count each.
func TestTenantBound429(t *testing.T) {
	gate := newGate()
	h := newHarness(t, gate, func(c *jobapi.Config) {
		c.AsyncMaxQueue = 4
		c.TenantMaxQueue = 1
		c.Workers = 4
	})
	f := newTenantFront(t, h, "a submit", "b submit max_queue=2", "c submit", "prom metrics")
	status, body := f.submit("a/submit", "a1")
	require.Equal(t, http.StatusAccepted, status, body)
	status, body = f.submit("a/submit", "a2")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Contains(t, body, "this tenant's share of the job queue is full")
	for _, task := range []string{"b1", "b2"} {
		status, body = f.submit("b/submit", task)
		require.Equal(t, http.StatusAccepted, status, "b's own bound is 2: %s", body)
	}
	status, body = f.submit("c/submit", "c1")
	require.Equal(t, http.StatusAccepted, status, body)
	status, body = f.submit("c/submit", "c2")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Contains(t, body, "this tenant's share", "c is at its bound and so is the ledger: the tenant's is checked first")
	status, body = f.submit("b/submit", "b3")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Contains(t, body, "this tenant's share")

	status, _, metrics := f.do("prom/metrics", http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, metrics, `jobledger_tenant_jobs_submitted_total{tenant="b"} 2`)
	require.Contains(t, metrics, `jobledger_tenant_jobs_rejected_total{bound="tenant",tenant="a"} 1`)
	require.Contains(t, metrics, `jobledger_tenant_queue_depth{tenant="b"} 2`)
	require.Contains(t, metrics, `jobledger_tenant_queue_depth{tenant="a"} 1`)
	for range 4 {
		<-gate.started
	}
}

// TestTenantBoundLedgerFull: with room in the tenant's bound but none in
// the ledger, the 429 is the queue's.
func TestTenantBoundLedgerFull(t *testing.T) {
	gate := newGate()
	h := newHarness(t, gate, func(c *jobapi.Config) {
		c.AsyncMaxQueue = 1
		c.TenantMaxQueue = 2
	})
	f := newTenantFront(t, h, "a submit", "b submit", "prom metrics")
	status, body := f.submit("a/submit", "a1")
	require.Equal(t, http.StatusAccepted, status, body)
	status, body = f.submit("b/submit", "b1")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.Contains(t, body, "job queue is full")
	_, _, metrics := f.do("prom/metrics", http.MethodGet, "/metrics", "")
	require.Contains(t, metrics, `jobledger_tenant_jobs_rejected_total{bound="ledger",tenant="b"} 1`)
	<-gate.started
}
