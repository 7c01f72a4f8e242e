package jobapi_test

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi"
)

// yamlKeys reads the mapping keys of a block-style YAML file as
// slash-separated paths ("paths/~1jobs/post/responses/202"), enough to
// compare docs/openapi.yaml with the server. "/" inside a key is written
// "~1", as in a JSON pointer.
func yamlKeys(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	keys := map[string]bool{}
	type level struct {
		indent int
		key    string
	}
	var stack []level
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "- ") {
			continue
		}
		colon := strings.Index(trimmed, ":")
		if colon <= 0 || (colon+1 < len(trimmed) && trimmed[colon+1] != ' ') {
			continue // a folded scalar's text, not a key
		}
		indent := len(line) - len(trimmed)
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		key := strings.Trim(trimmed[:colon], `'"`)
		stack = append(stack, level{indent, strings.ReplaceAll(key, "/", "~1")})
		parts := make([]string, len(stack))
		for i, l := range stack {
			parts[i] = l.key
		}
		keys[strings.Join(parts, "/")] = true
	}
	require.NoError(t, sc.Err())
	return keys
}

// children returns the keys directly under prefix.
func children(keys map[string]bool, prefix string) []string {
	var out []string
	for k := range keys {
		if rest, ok := strings.CutPrefix(k, prefix+"/"); ok && !strings.Contains(rest, "/") {
			out = append(out, strings.ReplaceAll(rest, "~1", "/"))
		}
	}
	sort.Strings(out)
	return out
}

// contractCodes is every status each operation answers, as the tests of
// this package drive them. An operation's 405 stands for the path's answer
// to the methods it lacks, so HEAD, which every GET path accepts, lists
// GET's codes but 405. The 401 and 403 are package auth's, in front of
// every route but /healthz (TestAuthAnswersEveryRoute).
var contractCodes = map[string][]string{
	"/jobs get":              {"200", "400", "401", "403", "405", "503"},
	"/jobs head":             {"200", "400", "401", "403", "503"},
	"/jobs post":             {"200", "202", "400", "401", "403", "405", "408", "413", "415", "422", "429", "503"},
	"/jobs/{id} get":         {"200", "401", "403", "404", "405", "503"},
	"/jobs/{id} head":        {"200", "401", "403", "404", "503"},
	"/jobs/{id}/wait get":    {"200", "400", "401", "403", "404", "405", "503"},
	"/jobs/{id}/wait head":   {"200", "400", "401", "403", "404", "503"},
	"/jobs/{id}/result get":  {"200", "401", "403", "404", "405", "409", "503"},
	"/jobs/{id}/result head": {"200", "401", "403", "404", "409", "503"},
	"/jobs/{id}/cancel post": {"200", "401", "403", "404", "405", "409", "503"},
	"/infer post":            {"200", "400", "401", "403", "405", "408", "413", "415", "422", "500", "503", "504"},
	"/healthz get":           {"200", "405", "503"},
	"/healthz head":          {"200", "503"},
	"/metrics get":           {"200", "401", "403", "405"},
	"/metrics head":          {"200", "401", "403"},
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	keys := yamlKeys(t, "../docs/openapi.yaml")
	h := newHarness(t, nil, echoConfig)
	routes := jobapi.Routes(h.srv)

	var want []string
	for p := range routes {
		want = append(want, p)
	}
	sort.Strings(want)
	require.Equal(t, want, children(keys, "paths"), "paths in docs/openapi.yaml")

	seen := 0
	for p, methods := range routes {
		ptr := "paths/" + strings.ReplaceAll(p, "/", "~1")
		var ops []string
		for _, c := range children(keys, ptr) {
			if c != "parameters" {
				ops = append(ops, c)
			}
		}
		var lower []string
		for _, m := range methods {
			lower = append(lower, strings.ToLower(m))
		}
		sort.Strings(lower)
		require.Equal(t, lower, ops, "operations of %s", p)
		for _, op := range ops {
			codes, ok := contractCodes[p+" "+op]
			require.True(t, ok, "contractCodes lacks %s %s", p, op)
			require.Equal(t, codes, children(keys, ptr+"/"+op+"/responses"), "responses of %s %s", op, p)
			seen++
		}
	}
	require.Len(t, contractCodes, seen)
}

func TestOpenAPISchemasMatchReplies(t *testing.T) {
	t.Parallel()
	keys := yamlKeys(t, "../docs/openapi.yaml")
	g := newGate()
	h := newHarness(t, g, nil)
	props := func(schema string) []string {
		return children(keys, "components/schemas/"+schema+"/properties")
	}
	fields := func(body map[string]any) []string {
		var out []string
		for k := range body {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}

	accepted := h.postJSON("/jobs", map[string]any{"task_id": "a"})
	require.Equal(t, props("Accepted"), fields(accepted.Body))
	id := accepted.Body["job_id"].(string)
	<-g.started
	g.release <- struct{}{}
	h.waitDone(id)
	require.Equal(t, props("Result"), fields(h.get("/jobs/"+id+"/result").Body))

	failing := h.submit("f", map[string]any{"fail": "x"})
	<-g.started
	g.release <- struct{}{}
	h.waitDone(failing)
	require.Equal(t, props("Snapshot"), fields(h.get("/jobs/"+failing+"/wait").Body)) // every field set
	require.Equal(t, props("JobList"), fields(h.get("/jobs?limit=1").Body))           // next_cursor: another follows

	got := make(chan reply, 1)
	go func() { got <- h.postJSON("/infer", map[string]any{"task_id": "i"}) }()
	<-g.started
	g.release <- struct{}{}
	require.Equal(t, props("Infer"), fields((<-got).Body))

	problem := h.get("/jobs/" + failing + "/result") // 409 carries every member but error
	require.Subset(t, props("Problem"), fields(problem.Body))
	require.Equal(t, props("JobRequest"), []string{"image", "params", "task_id"})
}
