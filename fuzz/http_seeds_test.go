package fuzz

// httpSeed is one seed input of FuzzHTTP.
type httpSeed struct {
	setup                             byte
	method, target, contentType, body string
	prefer                            string // the Prefer field, none when empty
	key                               string // the Idempotency-Key field, none when empty
}

const jsonCT = "application/json"

var httpSeeds = []httpSeed{
	// A valid submit (202) and one at the bound (429).
	{0, "POST", "/jobs", jsonCT, `{"task_id":"a","params":{"x":1}}`, "", ""},
	{setupFull, "POST", "/jobs", jsonCT, `{"task_id":"a"}`, "", ""},
	// Bodies: malformed, unknown field, wrong type, trailing data, bad
	// base64, long task id, params not an object, echo's own refusal,
	// and too large.
	{0, "POST", "/jobs", jsonCT, `{"task_id":`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"task":"a"}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"image":5}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{} {}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"image":"!!!"}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"task_id":"` + string(make129()) + `"}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"params":[1]}`, "", ""},
	{0, "POST", "/jobs", jsonCT, `{"params":{"sleep_ms":-1}}`, "", ""},
	{setupSmallMaxBody, "POST", "/jobs", jsonCT, `{"task_id":"` + string(make129()) + `"}`, "", ""},
	// Media types: absent, wrong, a +json suffix, with parameters, broken.
	{0, "POST", "/jobs", "", `{}`, "", ""},
	{0, "POST", "/jobs", "text/plain", `{}`, "", ""},
	{0, "POST", "/jobs", "application/problem+json", `{}`, "", ""},
	{0, "POST", "/jobs", "application/json; charset=utf-8", `{}`, "", ""},
	{0, "POST", "/jobs", "application/json; charset", `{}`, "", ""},
	// Reads of a DONE, a FAILED and a running job, and of unknown ids.
	{setupDone, "GET", "/jobs/j1", "", "", "", ""},
	{setupDone, "GET", "/jobs/j1/result", "", "", "", ""},
	{setupFailed, "GET", "/jobs/j1/result", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/result", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1", "", "", "", ""},
	{0, "GET", "/jobs/nope", "", "", "", ""},
	{0, "GET", "/jobs/%2e%2e/result", "", "", "", ""},
	// Waits: timeouts valid, negative, not a number, repeated, huge.
	{setupDone, "GET", "/jobs/j1/wait?timeout=5", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/wait?timeout=0", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/wait?timeout=-1", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/wait?timeout=1e3", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/wait?timeout=1&timeout=2", "", "", "", ""},
	{setupRunning, "GET", "/jobs/j1/wait?timeout=99999999999999999999999", "", "", "", ""},
	{0, "GET", "/jobs/j9/wait", "", "", "", ""},
	// Cancel: a running job (200), a finished one (409), an unknown one.
	{setupRunning, "POST", "/jobs/j1/cancel", "", "", "", ""},
	{setupDone, "POST", "/jobs/j1/cancel", "", "", "", ""},
	{0, "POST", "/jobs/j1/cancel", "", "", "", ""},
	// The synchronous path: a result, a model failure, a bad body.
	{0, "POST", "/infer", jsonCT, `{"task_id":"s","params":{"a":[1,2]}}`, "", ""},
	{0, "POST", "/infer", jsonCT, `{"params":{"fail":"boom"}}`, "", ""},
	{0, "POST", "/infer", jsonCT, `{"params":{"sleep_ms":"x"}}`, "", ""},
	// Wrong methods, unknown routes, odd paths.
	{0, "DELETE", "/jobs", "", "", "", ""},
	{0, "PUT", "/jobs/j1", jsonCT, `{}`, "", ""},
	{0, "GET", "/infer", "", "", "", ""},
	{0, "POST", "/healthz", "", "", "", ""},
	{0, "GET", "/healthz", "", "", "", ""},
	{0, "GET", "/metrics", "", "", "", ""},
	{0, "GET", "/", "", "", "", ""},
	{0, "GET", "/jobs/j1/result/extra", "", "", "", ""},
	{0, "OPTIONS", "*", "", "", "", ""},
	{0, "GET", "*", "", "", "", ""},
	{setupDone, "GET", "/jobs/./j1", "", "", "", ""},
	{setupDone, "GET", "//jobs/j1", "", "", "", ""},
	{0, "POST", "/jobs/", jsonCT, `{}`, "", ""},
	{0, "CONNECT", "fuzz.test:443", "", "", "", ""},
	{0, "GET", "http://other.test/jobs/j1", "", "", "", ""},
	// Prefer: a wait that the job ends within (200), waits that are none or
	// ill-formed (202), a wait at the bound (429), hostile fields.
	{0, "POST", "/jobs", jsonCT, `{"task_id":"w"}`, "wait=5", ""},
	{0, "POST", "/jobs", jsonCT, `{"params":{"fail":"boom"}}`, "respond-async, wait=5", ""},
	{setupRunning, "POST", "/jobs", jsonCT, `{}`, `wait="99999999999999999999"; x=y`, ""},
	{0, "POST", "/jobs", jsonCT, `{}`, "wait=0", ""},
	{0, "POST", "/jobs", jsonCT, `{}`, "wait=-1, wait=5", ""},
	{0, "POST", "/jobs", jsonCT, `{}`, `foo="a,\"b", wait`, ""},
	{setupFull, "POST", "/jobs", jsonCT, `{}`, "wait=5", ""},
	{0, "POST", "/jobs", jsonCT, `{"task_id":`, "wait=5", ""},
	{setupDone, "GET", "/jobs/j1", "", "", "wait=5", ""},
	// Idempotency-Key: a new key, a replay of the setup's first job (its
	// body, byte for byte), a conflict, keys malformed, a replay with a
	// full queue (202, not 429) and with Prefer.
	{0, "POST", "/jobs", jsonCT, `{"task_id":"a"}`, "", "new-key"},
	{setupKeyed | setupDone, "POST", "/jobs", jsonCT, `{"params":{"k":1},"task_id":"done"}`, "", "k"},
	{setupKeyed | setupDone, "POST", "/jobs", jsonCT, `{"task_id":"other"}`, "", "k"},
	{setupKeyed | setupDone, "POST", "/jobs", jsonCT, `{not json`, "", "k"},
	{setupKeyed | setupDone | setupFull, "POST", "/jobs", jsonCT, `{"params":{"k":1},"task_id":"done"}`, "", "k"},
	{setupKeyed | setupDone, "POST", "/jobs", jsonCT, `{"params":{"k":1},"task_id":"done"}`, "wait=3", `"k"`},
	{0, "POST", "/jobs", jsonCT, `{}`, "", `""`},
	{0, "POST", "/jobs", jsonCT, `{}`, "", "\x01"},
	{0, "POST", "/jobs", jsonCT, `{}`, "", string(make129()) + string(make129())},
	{0, "POST", "/jobs", jsonCT, `{}`, "", `"a\q"`},
	// Listing: every job, filters, a page and its cursor, bad parameters
	// (state, limit, cursor, repeated), and a cursor no server made.
	{setupDone | setupFailed | setupRunning, "GET", "/jobs", "", "", "", ""},
	{setupDone | setupFailed, "GET", "/jobs?state=FAILED&task_id=failed", "", "", "", ""},
	{setupDone | setupFailed, "GET", "/jobs?limit=1", "", "", "", ""},
	{setupDone | setupFailed, "GET", "/jobs?limit=1&cursor=AAAAAAAAAAI", "", "", "", ""},
	{setupDone, "GET", "/jobs?state=done", "", "", "", ""},
	{setupDone, "GET", "/jobs?limit=0", "", "", "", ""},
	{setupDone, "GET", "/jobs?limit=99999999999999999999999", "", "", "", ""},
	{setupDone, "GET", "/jobs?cursor=AAAAAAAAAAA", "", "", "", ""},
	{setupDone, "GET", "/jobs?cursor=%FF%00", "", "", "", ""},
	{setupDone, "GET", "/jobs?task_id=a&task_id=b&limit=x", "", "", "", ""},
	{setupDone, "HEAD", "/jobs?state=RUNNING", "", "", "", ""},
	{setupAsyncOff, "GET", "/jobs", "", "", "", ""},
	// Async disabled: the /jobs routes answer 503, the others work.
	{setupAsyncOff, "POST", "/jobs", jsonCT, `{}`, "", ""},
	{setupAsyncOff, "GET", "/jobs/j1", "", "", "", ""},
	{setupAsyncOff, "POST", "/infer", jsonCT, `{}`, "", ""},
}

// make129 returns a task id one byte over the limit.
func make129() []byte {
	b := make([]byte, 129)
	for i := range b {
		b[i] = 'x'
	}
	return b
}
