package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplay: -check reads a kept history and gives the verdict its run
// would have given, by its header's level, retention and TTL, running
// nothing.
func TestReplay(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
	}{
		{"http-job-lifecycle-ok.jsonl", exitOK},
		{"http-job-lost-in-restart-bad.jsonl", exitLinearizable}, // bad only because retained
		{"http-job-interrupted-by-restart-ok.jsonl", exitOK},
		{"http-job-expires-missing-bad.jsonl", exitLinearizable}, // bad only because the server knows its TTL
		{"http-job-submit-wait-ok.jsonl", exitOK},
		{"admission-over-bound-bad.jsonl", exitLinearizable},
	} {
		t.Run(c.file, func(t *testing.T) {
			var out, errOut bytes.Buffer
			path := filepath.Join("..", "..", "linearizability", "testdata", c.file)
			code := run([]string{"-check", path, "-out", t.TempDir()}, &out, &errOut)
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			require.Contains(t, out.String(), "lincheck: "+path)
		})
	}
	var out, errOut bytes.Buffer
	require.Equal(t, exitSetup, run([]string{"-check", filepath.Join(t.TempDir(), "none.jsonl")}, &out, &errOut))
	require.NotEmpty(t, errOut.String())

	// A kept walk is checked again: one that lists the job twice fails.
	dir := t.TempDir()
	path := filepath.Join(dir, "walk.jsonl")
	hist := "# max_queue: 2\n# level: http\n# knows_ttl: true\n" +
		`{"client":0,"call":1,"return":2,"in":{"kind":"submit","task":"t","value":"{}"},"out":{"outcome":"ok","id":"a"}}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(hist+`{"walk":1,"call":3,"return":4,"page":["a"]}`+"\n"), 0o644))
	out.Reset()
	require.Equal(t, exitOK, run([]string{"-check", path, "-out", dir}, &out, &errOut), out.String())
	require.Contains(t, out.String(), "walks:  1 of the listing")
	require.NoError(t, os.WriteFile(path, []byte(hist+`{"walk":1,"call":3,"return":4,"page":["a"]}`+"\n"+`{"walk":1,"call":3,"return":4,"page":["a"]}`+"\n"), 0o644))
	out.Reset()
	require.Equal(t, exitLinearizable, run([]string{"-check", path, "-out", dir}, &out, &errOut), out.String())
	require.Contains(t, out.String(), "LISTING VIOLATION")
}
