package linearizability_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/linearizability"
)

// TestHistories checks every hand-written history in testdata against the
// models: *-ok.jsonl must pass, *-bad.jsonl must fail in the model its
// name starts with (job- or admission-, after http- for a history of the
// HTTP level), with a visualization written. Each is checked twice, the
// admission model decided once by the sweep (as the gates do) and once by
// porcupine (its reference), which must agree.
func TestHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			hf := readHistory(t, path)
			dir := t.TempDir()
			check := linearizability.Check
			if hf.Level == "http" {
				require.True(t, strings.HasPrefix(name, "http-"), "an HTTP-level history's name starts with http-")
				check = linearizability.CheckHTTP
			}
			for _, porcupine := range []bool{false, true} {
				rep := check(hf.Ops, linearizability.CheckConfig{MaxQueue: hf.MaxQueue, Retained: hf.Retained, KnowsTTL: hf.KnowsTTL, VisualizeDir: dir, AdmissionPorcupine: porcupine})
				if !porcupine && rep.Model != "job" && rep.Model != "key" {
					require.Equal(t, "sweep", rep.AdmissionMethod, "the sweep decides every history that reaches the admission model")
				}
				switch {
				case strings.HasSuffix(name, "-ok"):
					require.Equal(t, linearizability.Linearizable, rep.Verdict, rep.Message)
				case strings.HasSuffix(name, "-bad"):
					require.Equal(t, linearizability.Violation, rep.Verdict, rep.Message)
					model, _, _ := strings.Cut(strings.TrimPrefix(name, "http-"), "-")
					require.Equal(t, model, rep.Model, rep.Message)
					require.NotEmpty(t, rep.Visualization, rep.Message)
					require.FileExists(t, rep.Visualization)
					t.Logf("%s (%s); visualization: %s", rep.Message, rep.AdmissionMethod, rep.Visualization)
				default:
					t.Fatalf("%s: name must end in -ok or -bad", path)
				}
			}
		})
	}
}

// TestHistoryRoundTrip writes each testdata history and reads it back.
func TestHistoryRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	for _, path := range files {
		hf := readHistory(t, path)
		var buf bytes.Buffer
		require.NoError(t, linearizability.WriteHistory(&buf, hf))
		back, err := linearizability.ReadHistory(&buf)
		require.NoError(t, err)
		require.Equal(t, hf, back, path)
	}
}

func TestReadHistoryRejectsNonsense(t *testing.T) {
	for name, line := range map[string]string{
		"unknown kind":    `{"client":0,"call":1,"return":2,"in":{"kind":"frobnicate"},"out":{"outcome":"ok"}}`,
		"unknown outcome": `{"client":0,"call":1,"return":2,"in":{"kind":"start","id":"j"},"out":{"outcome":"maybe"}}`,
		"unknown state":   `{"client":0,"call":1,"return":2,"in":{"kind":"snapshot","id":"j"},"out":{"outcome":"ok","state":"ASLEEP"}}`,
		"return first":    `{"client":0,"call":5,"return":2,"in":{"kind":"start","id":"j"},"out":{"outcome":"ok"}}`,
		"unknown field":   `{"client":0,"call":1,"return":2,"in":{"kind":"start","id":"j"},"out":{"outcome":"ok"},"x":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := linearizability.ReadHistory(strings.NewReader(line))
			require.Error(t, err)
		})
	}
}

func readHistory(t *testing.T, path string) linearizability.HistoryFile {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	hf, err := linearizability.ReadHistory(f)
	require.NoError(t, err)
	return hf
}
