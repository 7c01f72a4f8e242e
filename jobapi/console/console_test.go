package console_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/jobapi/console"
	"github.com/jobledger/jobledger/ledger"
)

func TestNewRefusesBadOptions(t *testing.T) {
	_, err := console.New(console.Options{})
	require.ErrorIs(t, err, console.ErrInvalidOptions)
	b := setup(t, 1, console.Options{})
	for name, o := range map[string]console.Options{
		"no overview":      {API: b.srv},
		"negative":         {API: b.srv, Overview: b.srv.Overview, Refresh: -1},
		"window too short": {API: b.srv, Overview: b.srv.Overview, SampleEvery: 10e9, Window: 15e9},
	} {
		_, err := console.New(o)
		require.ErrorIs(t, err, console.ErrInvalidOptions, name)
	}
}

func TestOverviewCountsAndQueue(t *testing.T) {
	b := setup(t, 1, console.Options{Store: "memory"})
	for range 3 {
		b.submit(t, "held", map[string]any{"hold": true})
	}
	b.waitRunning(t, 1)
	b.submit(t, "quick", nil)
	resp := b.do(t, http.MethodGet, "/console", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	html := b.page(t, "/console", http.StatusOK)
	require.Contains(t, html, `<dd id="count-RUNNING">1</dd>`)
	require.Contains(t, html, `<dd id="count-PENDING">3</dd>`)
	require.Contains(t, html, `<strong id="queue-depth">4</strong> of <span id="queue-max">64</span>`)
	require.Contains(t, html, `<strong id="workers-busy">1</strong> of 1`)
	require.Contains(t, html, `<code>memory</code>`)
	require.Contains(t, html, `data-refresh="2000"`)
	require.Contains(t, html, "Since start: 4 admitted, 0 refused, 0 done, 0 failed or timed out.")
	require.Contains(t, b.page(t, "/console/", http.StatusOK), `<dd id="count-PENDING">3</dd>`, "/console/ is the overview too")
}

func TestSecurityHeadersOnEveryReply(t *testing.T) {
	b := setup(t, 1, console.Options{})
	id := b.submit(t, "t", nil)
	for _, target := range []string{"/console", "/console/jobs", "/console/jobs/" + id, "/console/nope",
		"/console/assets/console.css", "/console/assets/console.js", "/console/jobs/NOPE"} {
		resp := b.do(t, http.MethodGet, target, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self'", target)
		require.NotContains(t, csp, "unsafe-inline", target)
		require.Contains(t, csp, "frame-ancestors 'none'", target)
		require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), target)
		require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), target)
	}
	require.Contains(t, b.do(t, http.MethodGet, "/console/assets/console.js", nil).Header.Get("Content-Type"), "javascript")
	require.Contains(t, b.do(t, http.MethodGet, "/console/assets/console.css", nil).Header.Get("Content-Type"), "text/css")
}

// tag matches an HTML tag; a client's text, escaped, can never form one.
var tag = regexp.MustCompile(`<[a-zA-Z][^>]*>`)

// inlineCode returns the first tag of html that the policy would block or
// that would run inline: a script element without src, an event handler,
// a style attribute or element, a javascript: URL.
func inlineCode(html string) string {
	for _, tg := range tag.FindAllString(html, -1) {
		low := strings.ToLower(tg)
		bare := quoted.ReplaceAllString(low, `=""`) // the attributes' names alone
		switch {
		case strings.HasPrefix(low, "<script") && !strings.Contains(low, " src="),
			strings.HasPrefix(low, "<style"),
			handler.MatchString(bare),
			jsURL.MatchString(low):
			return tg
		}
	}
	return ""
}

var (
	quoted  = regexp.MustCompile(`="[^"]*"`)
	handler = regexp.MustCompile(`\s(?:on[a-z]+|style)=`)
	jsURL   = regexp.MustCompile(`(?:href|src|action)="\s*javascript:`)
)

// hostile are task ids (and error texts) that would run or break the page
// if they were written unescaped.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`'><svg onload=alert(3)>`,
	`javascript:alert(4)`,
	`</pre></dd><b>bold</b>`,
	`{{.}} &amp; &lt;`,
}

func TestClientTextIsEscaped(t *testing.T) {
	b := setup(t, 2, console.Options{})
	var ids []string
	for _, h := range hostile {
		ids = append(ids, b.submit(t, h, map[string]any{"fail": h}))
		ids = append(ids, b.submit(t, h, map[string]any{"echoed": h}))
	}
	for _, id := range ids {
		b.wait(t, id)
	}
	pages := []string{b.page(t, "/console", http.StatusOK), b.page(t, "/console/jobs", http.StatusOK)}
	for _, id := range ids {
		pages = append(pages, b.page(t, "/console/jobs/"+id, http.StatusOK))
	}
	for _, h := range hostile {
		pages = append(pages, b.page(t, "/console/jobs?task_id="+url.QueryEscape(h), http.StatusOK))
	}
	for i, html := range pages {
		require.Empty(t, inlineCode(html), "page %d", i)
		for _, h := range hostile {
			if strings.ContainsAny(h, `<>"'&`) {
				require.NotContains(t, html, h, "page %d holds %q unescaped", i, h)
			}
		}
	}
	job := b.page(t, "/console/jobs/"+ids[0], http.StatusOK)
	require.Contains(t, job, `&lt;script&gt;alert(1)&lt;/script&gt;`, "the task id, as text")
	require.Contains(t, job, `<pre class="error" id="job-error">&lt;script&gt;alert(1)&lt;/script&gt;</pre>`)
	filtered := b.page(t, "/console/jobs?task_id="+url.QueryEscape(hostile[1]), http.StatusOK)
	require.Contains(t, filtered, `value="&#34;&gt;&lt;img src=x onerror=alert(2)&gt;"`, "the filter's field")
	require.Equal(t, 2, strings.Count(filtered, `class="job-link"`), "the filter finds the hostile task id's jobs")
}

func TestListingPagesAndFilters(t *testing.T) {
	b := setup(t, 4, console.Options{})
	var ids []string
	for i := range 45 {
		task := "even"
		if i%2 == 1 {
			task = "odd"
		}
		ids = append(ids, b.submit(t, task, nil))
	}
	for _, id := range ids {
		b.wait(t, id)
	}
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next"`)
	seen := map[string]bool{}
	target, pages := "/console/jobs", 0
	for target != "" && pages < 10 {
		html := b.page(t, target, http.StatusOK)
		pages++
		for _, m := range regexp.MustCompile(`href="/console/jobs/([A-Z0-9]+)"`).FindAllStringSubmatch(html, -1) {
			require.False(t, seen[m[1]], "job %s listed twice", m[1])
			seen[m[1]] = true
		}
		if pages > 1 {
			require.Contains(t, html, `>First page</a>`)
		}
		target = ""
		if m := next.FindStringSubmatch(html); m != nil {
			target = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	require.Equal(t, 3, pages, "45 jobs in pages of 20")
	require.Len(t, seen, 45)

	odd := b.page(t, "/console/jobs?state=DONE&task_id=odd", http.StatusOK)
	require.Equal(t, 20, strings.Count(odd, `class="job-link"`))
	require.Contains(t, odd, `<option value="DONE" selected>`)
	m := next.FindStringSubmatch(odd)
	require.NotNil(t, m)
	require.Contains(t, m[1], "task_id=odd", "the next page keeps the filter")
	require.Contains(t, m[1], "state=DONE")
	require.Equal(t, 20, strings.Count(b.page(t, "/console/jobs?task_id=", http.StatusOK), `class="job-link"`),
		"an empty task id filters nothing")
	require.Contains(t, b.page(t, "/console/jobs?state=FAILED", http.StatusOK), "No job matches.")
	require.Contains(t, b.page(t, "/console/jobs?state=nope", http.StatusBadRequest), "state must be one of")
	require.Contains(t, b.page(t, "/console/jobs?cursor=zz", http.StatusBadRequest), "cursor is not one this server gave")
}

func TestJobPageAndCancel(t *testing.T) {
	b := setup(t, 1, console.Options{})
	done := b.submit(t, "done-task", map[string]any{"answer": 42})
	b.wait(t, done)
	page := b.page(t, "/console/jobs/"+done, http.StatusOK)
	require.Contains(t, page, `id="job-state">DONE</span>`)
	require.Contains(t, page, `&#34;answer&#34;: 42`)
	require.NotContains(t, page, `id="cancel"`, "no cancel for a job that ended")
	require.NotContains(t, page, "data-refresh", "an ended job's page does not refresh")

	live := b.submit(t, "live-task", map[string]any{"hold": true})
	b.waitRunning(t, 1)
	page = b.page(t, "/console/jobs/"+live, http.StatusOK)
	require.Contains(t, page, `id="job-state">RUNNING</span>`)
	require.Contains(t, page, `href="/console/jobs/`+live+`/cancel"`)
	require.Contains(t, page, "data-refresh")
	confirm := b.page(t, "/console/jobs/"+live+"/cancel", http.StatusOK)
	require.Contains(t, confirm, `<form class="confirm" method="post" action="/console/jobs/`+live+`/cancel">`)
	require.Equal(t, "RUNNING", b.wait0(t, live), "showing the confirmation cancels nothing")

	cross := b.do(t, http.MethodPost, "/console/jobs/"+live+"/cancel", http.Header{"Sec-Fetch-Site": {"cross-site"}})
	require.Equal(t, http.StatusForbidden, cross.StatusCode, "a cross-site post is refused")
	require.Equal(t, "RUNNING", b.wait0(t, live))

	resp := b.do(t, http.MethodPost, "/console/jobs/"+live+"/cancel", http.Header{"Sec-Fetch-Site": {"same-origin"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/jobs/"+live+"?notice=canceled", resp.Header.Get("Location"))
	snap := b.wait(t, live)
	require.Equal(t, "FAILED", snap["state"])
	require.Equal(t, "canceled", snap["error"])
	require.Contains(t, b.page(t, "/console/jobs/"+live+"?notice=canceled", http.StatusOK), "The job was canceled.")

	again := b.do(t, http.MethodPost, "/console/jobs/"+live+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, again.StatusCode)
	require.Equal(t, "/console/jobs/"+live+"?notice=ended", again.Header.Get("Location"))
	gone := b.do(t, http.MethodGet, "/console/jobs/"+live+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, gone.StatusCode, "no confirmation for a job that ended")
	require.NotContains(t, b.page(t, "/console/jobs/"+live+"?notice=<b>x</b>", http.StatusOK), "<b>x</b>")
}

func TestMissingAndMisdirected(t *testing.T) {
	b := setup(t, 1, console.Options{})
	require.Contains(t, b.page(t, "/console/jobs/NOPE", http.StatusNotFound), "no such job")
	require.Contains(t, b.page(t, "/console/nope", http.StatusNotFound), "no such page")
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodPost, "/console/jobs/NOPE/cancel", nil).StatusCode)
	require.Equal(t, http.StatusMethodNotAllowed, b.do(t, http.MethodDelete, "/console/jobs", nil).StatusCode)

	// What is not the console's goes to the API, unchanged.
	for target, status := range map[string]int{"/jobs": 200, "/consoles": 404, "/console/../jobs": 404, "/healthz": 200} {
		resp := b.do(t, http.MethodGet, target, nil)
		require.Equal(t, status, resp.StatusCode, target)
		require.Empty(t, resp.Header.Get("Content-Security-Policy"), "%s is the API's", target)
	}
}

func TestServerWideFiguresCanBeWithheld(t *testing.T) {
	b := setup(t, 1, console.Options{ServerWide: func(r *http.Request) bool { return r.Header.Get("X-Admin") == "1" }})
	b.submit(t, "t", nil)
	plain := b.page(t, "/console", http.StatusOK)
	require.Contains(t, plain, `id="count-PENDING"`)
	require.NotContains(t, plain, "queue-depth")
	require.NotContains(t, plain, "plot-admitted")
	resp := b.do(t, http.MethodGet, "/console", http.Header{"X-Admin": {"1"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestReplicasAndLeases(t *testing.T) {
	b := setup(t, 1, console.Options{})
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	var report []ledger.ReplicaLeases
	var fail error
	con, err := console.New(console.Options{API: b.srv, Replica: "r1",
		Overview: func() jobapi.Overview { o := b.srv.Overview(); o.Shared = true; return o },
		Leases:   func(context.Context) ([]ledger.ReplicaLeases, error) { return report, fail }})
	require.NoError(t, err)
	defer con.Close()
	page := func() string {
		rec := httptest.NewRecorder()
		con.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		return rec.Body.String()
	}

	require.Contains(t, page(), "No replica holds a job under a lease now")
	report = []ledger.ReplicaLeases{{Replica: "r1", Jobs: 2, Next: at}, {Replica: "r2", Jobs: 1, Next: at, Lapsed: true}}
	html := page()
	require.Contains(t, html, "<dt>This replica</dt><dd><code>r1</code></dd>")
	require.Contains(t, html, `<tr><td><code>r1</code> (this one)</td><td>2</td><td>2030-01-01 12:00:00.000 UTC</td><td class="ok">renewed</td></tr>`)
	require.Contains(t, html, `<tr><td><code>r2</code></td><td>1</td><td>2030-01-01 12:00:00.000 UTC</td><td class="bad">lapsed`)
	fail = errors.New("database away")
	require.Contains(t, page(), "The leases could not be read: database away")

	require.NotContains(t, b.page(t, "/console", http.StatusOK), "This replica", "a store of one server has no replicas")
}

// tenantKey is the context key a gate in front of Mount stores its
// caller's tenant under.
type tenantKey struct{}

// TestGateInFrontOfMount: a middleware in front of Mount's handler gates
// the console and the API alike, and the API calls the console makes for
// a request carry that request's headers and context.
func TestGateInFrontOfMount(t *testing.T) {
	b := setup(t, 1, console.Options{})
	b.submit(t, "t", nil)
	var seen []string
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant, _ := r.Context().Value(tenantKey{}).(string)
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+tenant)
		b.srv.ServeHTTP(w, r)
	})
	con, err := console.New(console.Options{API: api, Overview: b.srv.Overview})
	require.NoError(t, err)
	defer con.Close()
	gate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t1" {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, "tenant-1")))
		})
	}
	h := gate(console.Mount(api, con))
	for _, target := range []string{"/console", "/console/jobs", "/jobs"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		require.Equal(t, http.StatusUnauthorized, rec.Code, target)
	}
	require.Empty(t, seen)

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/console/jobs", nil)
	req.Header.Set("Authorization", "Bearer t1")
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, []string{"GET /jobs Bearer t1 tenant-1"}, seen)
}
