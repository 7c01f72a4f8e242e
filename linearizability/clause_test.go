package linearizability

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The models' mutation test. Each model's Step is a list of named clauses
// (clause.go). Removing one must let some must-fail history in testdata
// pass the whole check (both models, as TestHistories runs it): that
// history is what pins the clause. A clause that no history needs is
// vacuous: it can be deleted, or broken, with every gate still passing.

// modelUnderTest is one model, with its clauses and a check of a history
// with the clauses r in force in it (the other model of its level whole).
type modelUnderTest struct {
	name    string
	http    bool
	clauses []clause
	check   func(hf HistoryFile, r rules) Report
}

func modelsUnderTest() []modelUnderTest {
	cfg := func(hf HistoryFile) CheckConfig {
		// The admission model under test is porcupine's: the sweep has no
		// clauses to remove. TestHistories checks the sweep on every history.
		return CheckConfig{MaxQueue: hf.MaxQueue, Retained: hf.Retained, KnowsTTL: hf.KnowsTTL, NoVisualize: true, AdmissionPorcupine: true}
	}
	return []modelUnderTest{
		{"JobModel", false, jobClauses[:], func(hf HistoryFile, r rules) Report {
			return check(hf.Ops, cfg(hf), models{job: jobModel(r), adm: AdmissionModel(hf.MaxQueue), key: KeyModel})
		}},
		{"AdmissionModel", false, admissionClauses[:], func(hf HistoryFile, r rules) Report {
			return check(hf.Ops, cfg(hf), models{job: JobModel, adm: admissionModel(hf.MaxQueue, r), key: KeyModel})
		}},
		{"KeyModel", false, keyClauses[:], func(hf HistoryFile, r rules) Report {
			key := KeyModel
			key.Step = func(state, input, output any) (bool, any) {
				return stepKeyRules(r, state.(keyState), input.(KeyInput), output.(KeyOutput))
			}
			return check(hf.Ops, cfg(hf), models{job: JobModel, adm: AdmissionModel(hf.MaxQueue), key: key})
		}},
		{"HTTPJobModel", true, httpJobClauses[:], func(hf HistoryFile, r rules) Report {
			r.retained, r.knowsTTL = hf.Retained, hf.KnowsTTL
			return check(hf.Ops, cfg(hf), httpModels(httpJobModel(r), HTTPAdmissionModel(hf.MaxQueue), HTTPKeyModel(cfg(hf))))
		}},
		{"HTTPAdmissionModel", true, httpAdmissionClauses[:], func(hf HistoryFile, r rules) Report {
			return check(hf.Ops, cfg(hf), httpModels(HTTPJobModel(cfg(hf)), httpAdmissionModel(hf.MaxQueue, r), HTTPKeyModel(cfg(hf))))
		}},
		// ReplayNamesHolder, last of keyClauses, is no clause of the HTTP
		// variant: a replay is the 202 that names the holder there.
		{"HTTPKeyModel", true, keyClauses[:keyReplayNamesHolder], func(hf HistoryFile, r rules) Report {
			r.retained = hf.Retained
			return check(hf.Ops, cfg(hf), httpModels(HTTPJobModel(cfg(hf)), HTTPAdmissionModel(hf.MaxQueue), httpKeyModel(r)))
		}},
	}
}

// namedHistory is a history file and its name.
type namedHistory struct {
	name string
	hf   HistoryFile
}

func readHistories(t *testing.T, pattern string) []namedHistory {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var hs []namedHistory
	for _, path := range files {
		f, err := os.Open(path)
		require.NoError(t, err)
		hf, err := ReadHistory(f)
		f.Close()
		require.NoError(t, err, path)
		hs = append(hs, namedHistory{strings.TrimSuffix(filepath.Base(path), ".jsonl"), hf})
	}
	return hs
}

// TestModelClausesPinned removes each clause of each model in turn and
// requires some must-fail history of the model's level to pass without it.
// It logs, clause by clause, the histories that pin it (run with -v).
func TestModelClausesPinned(t *testing.T) {
	bad := readHistories(t, "*-bad.jsonl")
	for _, m := range modelsUnderTest() {
		t.Run(m.name, func(t *testing.T) {
			require.Less(t, len(m.clauses), 64, "rules holds a bit per clause")
			var level []namedHistory
			for _, h := range bad {
				if (h.hf.Level == "http") == m.http {
					level = append(level, h)
					// With every clause in force the history fails, as
					// TestHistories also requires.
					require.NotEqual(t, Linearizable, m.check(h.hf, rules{}).Verdict, h.name)
				}
			}
			for c, cl := range m.clauses {
				var pins []string
				for _, h := range level {
					if m.check(h.hf, rules{}.without(clauseID(c))).Verdict == Linearizable {
						pins = append(pins, h.name)
					}
				}
				if len(pins) == 0 {
					t.Errorf("%s clause %s (%s) is vacuous: every must-fail history still fails without it; add one that only it rejects, or remove it",
						m.name, cl.Name, cl.Rule)
					continue
				}
				t.Logf("%-28s pinned by %s", cl.Name, strings.Join(pins, ", "))
			}
		})
	}
}

// modelDocs names, for each model, the start of the heading or list item
// of docs/verification.md's Linearizability section that introduces it:
// its clause table is the first table after it, before the next heading
// or list item. KeyModel's clauses are listed in HTTPKeyModel's table.
var modelDocs = map[string]string{
	"JobModel":           "### The per-job model (`JobModel`)",
	"AdmissionModel":     "### The admission model (`AdmissionModel`)",
	"KeyModel":           "- `HTTPKeyModel` (",
	"HTTPJobModel":       "- `HTTPJobModel` (",
	"HTTPAdmissionModel": "- `HTTPAdmissionModel` (",
	"HTTPKeyModel":       "- `HTTPKeyModel` (",
}

// clauseTable returns the rows of the first table after the line of
// section that starts with intro, each with its indentation trimmed, or an
// error if intro does not start exactly one line or no table follows it
// before the next heading or list item.
func clauseTable(section, intro string) ([]string, error) {
	lines := strings.Split(section, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, intro) {
			if at >= 0 {
				return nil, fmt.Errorf("two lines start with %q", intro)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("no line starts with %q", intro)
	}
	var rows []string
	for _, l := range lines[at+1:] {
		t := strings.TrimLeft(l, " ")
		switch {
		case strings.HasPrefix(t, "|"):
			rows = append(rows, t)
			continue
		case len(rows) > 0:
			return rows, nil // the table ended
		case strings.HasPrefix(l, "#") || strings.HasPrefix(l, "- "):
			return nil, fmt.Errorf("no table between %q and the next heading or list item", intro)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no table after %q", intro)
	}
	return rows, nil
}

// TestModelClausesDocumented: every clause is a row of its own model's
// clause table in the Linearizability section of docs/verification.md
// ("| `Name` |"), each clause has a name of its own within its model, and
// each invariant or property it cites is defined in spec/JobTable.tla or
// spec/DurableLedger.tla.
func TestModelClausesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "verification.md"))
	require.NoError(t, err)
	var spec []byte
	for _, name := range []string{"JobTable.tla", "DurableLedger.tla"} {
		b, err := os.ReadFile(filepath.Join("..", "spec", name))
		require.NoError(t, err)
		spec = append(spec, b...)
	}
	section := string(doc)
	if i := strings.Index(section, "\n## Linearizability"); i >= 0 {
		section = section[i:]
	}
	if i := strings.Index(section[1:], "\n## "); i >= 0 {
		section = section[:i+1]
	}
	for _, m := range modelsUnderTest() {
		intro, ok := modelDocs[m.name]
		require.True(t, ok, "%s: no entry in modelDocs", m.name)
		rows, err := clauseTable(section, intro)
		require.NoError(t, err, "%s's clause table in docs/verification.md", m.name)
		names := make(map[string]bool)
		for _, cl := range m.clauses {
			require.False(t, names[cl.Name], "%s: two clauses named %s", m.name, cl.Name)
			names[cl.Name] = true
			require.NotEmpty(t, cl.Rule, "%s.%s", m.name, cl.Name)
			require.True(t, slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "| `"+cl.Name+"` |") }),
				"%s.%s is no row of the table after %q in docs/verification.md's Linearizability section", m.name, cl.Name, intro)
			if cl.Spec != "" {
				require.Regexp(t, regexp.MustCompile(`(?m)^`+cl.Spec+` ==`), string(spec), "%s.%s cites %s", m.name, cl.Name, cl.Spec)
			}
		}
	}
}
