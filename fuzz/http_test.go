package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobledger/jobledger/internal/fakeclock"
	"github.com/jobledger/jobledger/jobapi"
	"github.com/jobledger/jobledger/ledger"
)

// httpMaxQueue is the admission bound of the server FuzzHTTP drives.
const httpMaxQueue = 2

// Setup bits of FuzzHTTP: the state the server is in when the hostile
// request arrives.
const (
	setupDone         = 1 << iota // j-ids: a DONE job
	setupFailed                   // a FAILED job
	setupRunning                  // a job that runs until shutdown
	setupFull                     // jobs that run until shutdown, up to the bound
	setupAsyncOff                 // async_enabled false (and no jobs)
	setupSmallMaxBody             // max_body_bytes 64
	setupKeyed                    // the setup's jobs are submitted under keys "k", "k2"
)

// problemDetails are the fixed problem details of docs/http.md.
var problemDetails = []string{
	"body is not valid JSON", "body has an unknown field", "body has a field of the wrong type",
	"body has data after the JSON object", "image is required", "image is not valid base64",
	"task_id exceeds 128 bytes", "task_id must not contain control characters", "params must be a JSON object",
	"params: sleep_ms must be a non-negative integer and fail a string",
	"timeout must be a non-negative integer of milliseconds", "no such job", "no such route",
	"method not allowed", "job is not DONE", "job is already terminal", "body exceeds max_body_bytes",
	"Content-Type must be application/json", "model failed", "job queue is full",
	"model panicked", "asynchronous jobs are disabled", "server shutting down",
	"no worker became free before the deadline", "deadline exceeded",
	"image exceeds max_pixels", "too many /infer requests in flight",
	"too many job submissions in flight", "too many result bytes in flight", "body did not arrive in time",
	"Idempotency-Key must be 1 to 255 printable characters",
	"Idempotency-Key was used for another request",
	"state must be one of PENDING, RUNNING, DONE, FAILED, TIMEOUT", "limit must be a positive integer",
	"cursor is not one this server gave", "task_id must be given at most once",
}

// FuzzHTTP sends one hostile request (method, request target, Content-Type,
// Prefer, Idempotency-Key and body, parsed by net/http as a server would) to a jobapi handler in a
// state chosen by setup, and checks that the handler:
//   - does not panic;
//   - answers one of the documented status codes, and no 5xx: the server is
//     not shutting down, has free workers and a model that neither panics
//     nor passes a deadline, so every failure is the client's (503 only
//     for the /jobs routes with async disabled);
//   - answers an error as application/problem+json with the status, the
//     status's title and one of the documented details, with Allow on 405,
//     Retry-After on 429 and 503 and Accept-Post on 415, and a success as
//     valid application/json (Location on 202; on POST /jobs a 200 only
//     with Prefer, carrying Location and Preference-Applied, and a
//     Preference-Applied only of the form wait=N; OPTIONS * an empty 200
//     with Allow), and leaves unanswered only a GET /jobs/{id}/wait on a
//     job still live, whose wait its client's hang-up ended;
//   - never holds more than the admission bound of jobs PENDING or RUNNING,
//     and shows every job in a state that agrees with its error and times;
//   - lists, on a GET /jobs, valid jobs newest first, and, walking GET
//     /jobs by pages after the request, exactly the jobs it holds;
//   - keeps the server's invariants (CheckInvariants) after the request,
//     and again once Shutdown has drained it, when no flight, no deadline
//     timer and no live job may be left.
func FuzzHTTP(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add(s.setup, s.method, s.target, s.contentType, s.prefer, s.key, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, setup byte, method, target, contentType, prefer, key string, body []byte) {
		runHTTP(t, setup, method, target, contentType, prefer, key, body)
	})
}

// runHTTP is one input of FuzzHTTP. A POST /jobs with Prefer: wait=N
// admits a job of the fuzz model, which never blocks on a hostile task id,
// so the wait ends with the job, whatever the clock.
//
// With setupKeyed, the setup's jobs are submitted under the keys "k" (the
// first), "k2", ..., so that a hostile request can replay or collide. A
// replay with Prefer: wait of a job the setup keeps running would wait for
// ever on the still clock; it cannot happen, since its body holds
// blockTaskID, which no input can name.
func runHTTP(t *testing.T, setup byte, method, target, contentType, prefer, key string, body []byte) {
	req := readRequest(method, target, contentType, prefer, key, body)
	if req == nil {
		return // net/http refuses it before any handler runs
	}

	cfg := jobapi.DefaultConfig()
	cfg.Model = "echo"
	cfg.Workers = httpMaxQueue + 2 // a worker is always free for /infer
	cfg.AsyncMaxQueue = httpMaxQueue
	cfg.AsyncMaxCompleted = 4
	cfg.MaxWait = 10 * time.Second // only the setup's own wait uses it
	cfg.AsyncEnabled = setup&setupAsyncOff == 0
	if setup&setupSmallMaxBody != 0 {
		cfg.MaxBodyBytes = 64
	}
	clock := newStillClock()
	lcfg := cfg.LedgerConfig()
	lcfg.Now, lcfg.NewID = clock.Now, fakeclock.Seq("j")
	store, err := ledger.NewMemory[jobapi.Request, json.RawMessage](lcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv, err := jobapi.New(store, cfg, jobapi.Options{
		Model:        fuzzModel{},
		Clock:        clock,
		LedgerJobTTL: cfg.AsyncJobTTL,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, srv, clock)

	jobs := 0
	if cfg.AsyncEnabled {
		jobs = prepare(t, srv, setup)
	}

	// The hostile request. A wait would block until its job ends: give it
	// a context that has ended, so that it answers at once, as its
	// client's hang-up ends it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := strings.Contains(req.URL.Path, "wait")
	if gone {
		cancel()
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req.WithContext(ctx))
	res := rec.Result()
	desc := fmt.Sprintf("setup %#x, %s %q (path %q), Content-Type %q, Prefer %q, Idempotency-Key %q, body %q:\n  answered %d %v %q",
		setup, req.Method, target, req.URL.Path, contentType, prefer, key, body, res.StatusCode, res.Header, rec.Body.Bytes())
	if gone && unanswered(rec) {
		if err := checkUnanswered(srv, req); err != nil {
			t.Fatalf("%s\n%v", desc, err)
		}
	} else if err := checkReply(res, rec.Body.Bytes(), req, cfg.AsyncEnabled); err != nil {
		t.Fatalf("%s\n%v", desc, err)
	}
	if (res.StatusCode == http.StatusAccepted || (res.StatusCode == http.StatusOK && isSubmit(req))) && !replayed(res, rec.Body.Bytes(), jobs) {
		jobs++
	}
	if err := checkJobs(srv, jobs, cfg.AsyncEnabled); err != nil {
		t.Fatalf("%s\nafter it: %v", desc, err)
	}
	if err := srv.CheckInvariants(); err != nil {
		t.Fatalf("%s\nafter it, the server's invariants: %v", desc, err)
	}
}

// unanswered reports whether the handler wrote no reply: no body, and none
// of the headers every reply carries (Content-Type, or Allow on OPTIONS);
// the server sets Cache-Control before any handler runs.
func unanswered(rec *httptest.ResponseRecorder) bool {
	h := rec.Header()
	return rec.Body.Len() == 0 && h.Get("Content-Type") == "" && h.Get("Allow") == "" && !rec.Flushed
}

// checkUnanswered checks a request whose client had gone and that got no
// reply: only GET /jobs/{id}/wait on a job still live may leave its client
// so, its wait ended by the hang-up; a wait on a job ended or unknown is
// answered at once, and every other request whatever its context.
func checkUnanswered(srv *jobapi.Server, req *http.Request) error {
	id, ok := strings.CutPrefix(req.URL.Path, "/jobs/")
	if ok {
		id, ok = strings.CutSuffix(id, "/wait")
	}
	if !ok || req.Method != http.MethodGet || req.URL.RawPath != "" || id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("no reply to a request other than a wait")
	}
	rec := serve(srv, http.MethodGet, "/jobs/"+id, "")
	var snap struct{ State string }
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &snap) != nil {
		return fmt.Errorf("no reply to a wait on job %q, which GET /jobs/{id} answers %d %s", id, rec.Code, rec.Body)
	}
	if snap.State != "PENDING" && snap.State != "RUNNING" {
		return fmt.Errorf("no reply to a wait on job %q, which is %s", id, snap.State)
	}
	return nil
}

// replayed reports whether a submit's success names a job the server
// held before it (ids j1 ... jN): an idempotent replay, which admits
// nothing.
func replayed(res *http.Response, body []byte, jobs int) bool {
	var a struct {
		JobID string `json:"job_id"`
	}
	if json.Unmarshal(body, &a) != nil || !strings.HasPrefix(a.JobID, "j") {
		return false
	}
	n, err := strconv.Atoi(a.JobID[1:])
	return err == nil && n >= 1 && n <= jobs
}

// isSubmit reports whether req reached POST /jobs.
func isSubmit(req *http.Request) bool {
	return req.Method == http.MethodPost && req.URL.Path == "/jobs" && req.RequestURI != "*"
}

// readRequest parses the request as net/http's server does, or returns nil
// if the server would refuse it before calling the handler.
func readRequest(method, target, contentType, prefer, key string, body []byte) *http.Request {
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: fuzz.test\r\n", method, target)
	if contentType != "" {
		fmt.Fprintf(&raw, "Content-Type: %s\r\n", contentType)
	}
	if prefer != "" {
		fmt.Fprintf(&raw, "Prefer: %s\r\n", prefer)
	}
	if key != "" {
		fmt.Fprintf(&raw, "Idempotency-Key: %s\r\n", key)
	}
	fmt.Fprintf(&raw, "Content-Length: %d\r\n\r\n", len(body))
	raw.Write(body)
	req, err := http.ReadRequest(bufio.NewReader(&raw))
	if err != nil {
		return nil
	}
	return req
}

// prepare puts the server in the state setup asks for, through the API,
// and returns the number of jobs it admitted.
func prepare(t *testing.T, srv *jobapi.Server, setup byte) int {
	t.Helper()
	jobs := 0
	post := func(task, body string) string {
		t.Helper()
		if body == "" {
			body = string(jobBody(task))
		}
		req := httptest.NewRequest(http.MethodPost, "/jobs", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if setup&setupKeyed != 0 {
			key := "k" // the first job's; then k2, k3, ...
			if jobs > 0 {
				key += strconv.Itoa(jobs + 1)
			}
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("setup: POST /jobs = %d %s", rec.Code, rec.Body)
		}
		jobs++
		return "j" + strconv.Itoa(jobs)
	}
	settle := func(id string) {
		t.Helper()
		if rec := serve(srv, http.MethodGet, "/jobs/"+id+"/wait", ""); rec.Code != http.StatusOK {
			t.Fatalf("setup: wait %s = %d %s", id, rec.Code, rec.Body)
		}
	}
	if setup&setupDone != 0 {
		settle(post("done", ""))
	}
	if setup&setupFailed != 0 {
		settle(post("", `{"task_id":"failed","params":{"fail":"on purpose"}}`))
	}
	running := 0
	if setup&setupRunning != 0 {
		running = 1
	}
	if setup&setupFull != 0 {
		running = httpMaxQueue
	}
	for range running {
		post(blockTaskID, "")
	}
	return jobs
}

func serve(srv *jobapi.Server, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// shutdown ends the server's jobs and waits for every goroutine it started,
// then checks the server's invariants, whose drained clauses see a flight
// or a deadline timer left behind, and that clock holds no timer.
func shutdown(t *testing.T, srv *jobapi.Server, clock *stillClock) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: end the jobs still running now
	if err := srv.Shutdown(ctx); err != nil && err != context.Canceled {
		t.Errorf("Shutdown: %v", err)
	}
	if err := srv.CheckInvariants(); err != nil {
		t.Errorf("once drained, the server's invariants: %v", err)
	}
	if n := clock.pending(); n != 0 {
		t.Errorf("once drained, %d deadline timers never stopped", n)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// problemReply is the problem+json body.
type problemReply struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// rfc9110Title is the reason phrase of code in RFC 9110, where it differs
// from net/http's StatusText.
func rfc9110Title(code int) string {
	switch code {
	case http.StatusRequestEntityTooLarge:
		return "Content Too Large"
	case http.StatusUnprocessableEntity:
		return "Unprocessable Content"
	}
	return http.StatusText(code)
}

// appliedWait is the form of Preference-Applied: the one preference the
// server applies, wait, with the whole seconds it applied.
var appliedWait = regexp.MustCompile(`^wait=[0-9]+$`)

// checkReply checks the status, headers and body of a reply to req.
func checkReply(res *http.Response, body []byte, req *http.Request, asyncEnabled bool) error {
	code := res.StatusCode
	ct := res.Header.Get("Content-Type")
	if code >= 400 {
		if ct != "application/problem+json" {
			return fmt.Errorf("%d with Content-Type %q, want application/problem+json", code, ct)
		}
		var p problemReply
		if err := json.Unmarshal(body, &p); err != nil {
			return fmt.Errorf("problem body: %v", err)
		}
		if p.Type != "about:blank" || p.Status != code || p.Title != rfc9110Title(code) {
			return fmt.Errorf("problem %+v does not match status %d", p, code)
		}
		if !slices.Contains(problemDetails, p.Detail) {
			return fmt.Errorf("problem detail %q is not a documented one", p.Detail)
		}
	}
	if pa := res.Header.Values("Preference-Applied"); len(pa) > 0 {
		if !isSubmit(req) || (code != http.StatusOK && code != http.StatusAccepted) || len(pa) != 1 || !appliedWait.MatchString(pa[0]) {
			return fmt.Errorf("%d with Preference-Applied %q", code, pa)
		}
	}
	switch code {
	case http.StatusOK:
		if isSubmit(req) {
			var j struct {
				JobID string `json:"job_id"`
				State string `json:"state"`
			}
			switch {
			case json.Unmarshal(body, &j) != nil || j.JobID == "":
				return fmt.Errorf("200 to a submit with body %q", body)
			case j.State != "DONE" && j.State != "FAILED" && j.State != "TIMEOUT":
				return fmt.Errorf("200 to a submit for a job %s", j.State)
			case res.Header.Get("Preference-Applied") == "":
				return fmt.Errorf("200 to a submit without Preference-Applied")
			case res.Header.Get("Location") != "jobs/"+j.JobID:
				return fmt.Errorf("200 to a submit for %s with Location %q", j.JobID, res.Header.Get("Location"))
			}
		}
		if req.Method == http.MethodOptions && req.RequestURI == "*" {
			if res.Header.Get("Allow") == "" || len(body) != 0 {
				return fmt.Errorf("OPTIONS * with Allow %q and %d bytes of body", res.Header.Get("Allow"), len(body))
			}
			return nil
		}
		if req.URL.Path == "/metrics" {
			if !strings.HasPrefix(ct, "text/plain") {
				return fmt.Errorf("metrics with Content-Type %q", ct)
			}
			return nil
		}
		if ct != "application/json" || !json.Valid(body) {
			return fmt.Errorf("200 with Content-Type %q and a body that is valid JSON: %t", ct, json.Valid(body))
		}
		if req.Method == http.MethodGet && req.URL.Path == "/jobs" {
			if _, _, err := readPage(body); err != nil {
				return err
			}
		}
	case http.StatusAccepted:
		var a struct {
			JobID string `json:"job_id"`
			State string `json:"state"`
		}
		if ct != "application/json" || json.Unmarshal(body, &a) != nil || a.JobID == "" {
			return fmt.Errorf("202 with Content-Type %q and body %q", ct, body)
		}
		if loc := res.Header.Get("Location"); loc != "jobs/"+a.JobID { // relative to /jobs
			return fmt.Errorf("202 for %s with Location %q", a.JobID, loc)
		}
	case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict,
		http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
	case http.StatusMethodNotAllowed:
		if res.Header.Get("Allow") == "" {
			return fmt.Errorf("405 without Allow")
		}
	case http.StatusUnsupportedMediaType:
		if res.Header.Get("Accept-Post") == "" {
			return fmt.Errorf("415 without Accept-Post")
		}
	case http.StatusTooManyRequests:
		if res.Header.Get("Retry-After") == "" {
			return fmt.Errorf("429 without Retry-After")
		}
	case http.StatusServiceUnavailable:
		if asyncEnabled || !strings.HasPrefix(req.URL.Path, "/jobs") {
			return fmt.Errorf("503 for a client's request to a server that is not shutting down")
		}
		if res.Header.Get("Retry-After") == "" {
			return fmt.Errorf("503 without Retry-After")
		}
	default:
		return fmt.Errorf("status %d is not one the API documents for a client's request", code)
	}
	return nil
}

// checkJobs reads every job the server admitted (ids j1 ... jN) through
// the API and checks the admission bound, each job's view, and that GET
// /jobs lists exactly the jobs held.
func checkJobs(srv *jobapi.Server, jobs int, asyncEnabled bool) error {
	live := 0
	var held []string
	for n := 1; n <= jobs; n++ {
		id := "j" + strconv.Itoa(n)
		rec := serve(srv, http.MethodGet, "/jobs/"+id, "")
		if rec.Code == http.StatusNotFound {
			continue // evicted
		}
		held = append(held, id)
		var s struct {
			JobID       string `json:"job_id"`
			State       string `json:"state"`
			Error       string `json:"error"`
			StartedAt   string `json:"started_at"`
			CompletedAt string `json:"completed_at"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &s) != nil || s.JobID != id {
			return fmt.Errorf("GET /jobs/%s = %d %s", id, rec.Code, rec.Body)
		}
		terminal := s.State == "DONE" || s.State == "FAILED" || s.State == "TIMEOUT"
		switch {
		case !terminal && s.State != "PENDING" && s.State != "RUNNING":
			return fmt.Errorf("job %s in state %q", id, s.State)
		case terminal != (s.CompletedAt != ""):
			return fmt.Errorf("job %s %s with completed_at %q", id, s.State, s.CompletedAt)
		case (s.State == "FAILED" || s.State == "TIMEOUT") != (s.Error != ""):
			return fmt.Errorf("job %s %s with error %q", id, s.State, s.Error)
		case s.State == "RUNNING" && s.StartedAt == "":
			return fmt.Errorf("job %s RUNNING with no started_at", id)
		}
		if !terminal {
			live++
		}
	}
	if live > httpMaxQueue {
		return fmt.Errorf("%d jobs PENDING or RUNNING, above the bound %d", live, httpMaxQueue)
	}
	if !asyncEnabled {
		return nil // GET /jobs is a 503, as every /jobs route
	}
	return checkListing(srv, held)
}

// listed is one item of a GET /jobs page.
type listed struct {
	JobID string `json:"job_id"`
	State string `json:"state"`
}

// readPage reads a GET /jobs reply: its items, each a job j1 ... jN in a
// state, newest (highest N) first, at most 100 of them, and its cursor.
func readPage(body []byte) ([]listed, string, error) {
	var p struct {
		Jobs []listed `json:"jobs"`
		Next *string  `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Jobs == nil {
		return nil, "", fmt.Errorf("GET /jobs with body %q", body)
	}
	if len(p.Jobs) > 100 || (p.Next != nil && *p.Next == "") {
		return nil, "", fmt.Errorf("GET /jobs: %d jobs, cursor %v", len(p.Jobs), p.Next)
	}
	prev := 0
	for _, j := range p.Jobs {
		n, err := strconv.Atoi(strings.TrimPrefix(j.JobID, "j"))
		if err != nil || !strings.HasPrefix(j.JobID, "j") || (prev != 0 && n >= prev) {
			return nil, "", fmt.Errorf("GET /jobs lists %q after j%d: not newest first", j.JobID, prev)
		}
		prev = n
		if !slices.Contains([]string{"PENDING", "RUNNING", "DONE", "FAILED", "TIMEOUT"}, j.State) {
			return nil, "", fmt.Errorf("GET /jobs lists %s in state %q", j.JobID, j.State)
		}
	}
	next := ""
	if p.Next != nil {
		next = *p.Next
	}
	return p.Jobs, next, nil
}

// checkListing walks GET /jobs by pages of two and checks that it lists
// exactly the jobs held, each once.
func checkListing(srv *jobapi.Server, held []string) error {
	var got []string
	target := "/jobs?limit=2"
	for range 100 {
		rec := serve(srv, http.MethodGet, target, "")
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		items, next, err := readPage(rec.Body.Bytes())
		if err != nil {
			return err
		}
		for _, j := range items {
			got = append(got, j.JobID)
		}
		if next == "" {
			break
		}
		target = "/jobs?limit=2&cursor=" + url.QueryEscape(next)
	}
	slices.Reverse(got)
	if !slices.Equal(got, held) {
		return fmt.Errorf("GET /jobs walks %v, the jobs held are %v", got, held)
	}
	return nil
}
