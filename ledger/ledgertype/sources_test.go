package ledgertype_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// The states are listed once, in Go; the SQL schemas and the TLA+ specs
// name them too. These tests read those files and hold them to the Go list.

// names returns the wire names of the states that keep reports true, sorted.
func names(keep func(ledgertype.State) bool) []string {
	var out []string
	for _, s := range ledgertype.States() {
		if keep(s) {
			out = append(out, s.String())
		}
	}
	slices.Sort(out)
	return out
}

var (
	allNames      = names(func(ledgertype.State) bool { return true })
	terminalNames = names(ledgertype.State.Terminal)
	liveNames     = names(func(s ledgertype.State) bool { return !s.Terminal() })
)

func readGlob(t *testing.T, pattern string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no file matches %s (%v)", pattern, err)
	}
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

var (
	stateCheck = regexp.MustCompile(`state\s+\w+\s+NOT NULL CHECK \(state BETWEEN (\d+) AND (\d+)\)`)
	stateCodes = regexp.MustCompile(`state is a ledger\.State \(([^)]*)\)`)
	codeName   = regexp.MustCompile(`(\d+) ([A-Z]+)`)
	sqlComment = regexp.MustCompile(`\n--\s*`)
)

// TestSQLStates checks each store's jobs table: its CHECK admits exactly
// the states' numbers, and the column's comment names each number's state.
func TestSQLStates(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var checks, codes int
			for path, sql := range readGlob(t, filepath.Join("..", "..", "store", store, "migrations", "*.sql")) {
				for _, m := range stateCheck.FindAllStringSubmatch(sql, -1) {
					checks++
					lo, _ := strconv.Atoi(m[1])
					hi, _ := strconv.Atoi(m[2])
					if lo != 0 || hi != len(allNames)-1 {
						t.Errorf("%s: CHECK (state BETWEEN %d AND %d), want 0 AND %d", path, lo, hi, len(allNames)-1)
					}
				}
				for _, m := range stateCodes.FindAllStringSubmatch(sqlComment.ReplaceAllString(sql, " "), -1) {
					codes++
					pairs := codeName.FindAllStringSubmatch(m[1], -1)
					if len(pairs) != len(allNames) {
						t.Errorf("%s: the comment names %d states, want %d: %s", path, len(pairs), len(allNames), m[1])
					}
					for _, p := range pairs {
						n, _ := strconv.Atoi(p[1])
						if got := ledgertype.State(n).String(); got != p[2] {
							t.Errorf("%s: the comment says state %d is %s, Go says %s", path, n, p[2], got)
						}
					}
				}
			}
			if checks != 1 || codes != 1 {
				t.Errorf("found %d state CHECKs and %d commented state lists, want one of each", checks, codes)
			}
		})
	}
}

var (
	tlaSetDef  = regexp.MustCompile(`(?m)^(Terminal|Live|States)\s*==\s*(.*)$`)
	tlaStrings = regexp.MustCompile(`"([A-Z_]+)"`)
	cfgState   = regexp.MustCompile(`(?m)^\s*(\w+)\s*=\s*(.*"[A-Z]+".*)$`)
)

// tlaSet returns the sorted string literals of a TLA+ set expression.
func tlaSet(expr string) []string {
	var out []string
	for _, m := range tlaStrings.FindAllStringSubmatch(expr, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// TestTLAStates checks the specs' Terminal, Live and States definitions
// against the Go list, and that the models' constants name only states
// (the outcomes only terminal ones).
func TestTLAStates(t *testing.T) {
	defined := map[string]bool{}
	for path, src := range readGlob(t, filepath.Join("..", "..", "spec", "*.tla")) {
		for _, m := range tlaSetDef.FindAllStringSubmatch(src, -1) {
			name, expr := m[1], m[2]
			got := tlaSet(expr)
			var want []string
			switch name {
			case "Terminal":
				defined[filepath.Base(path)] = true
				want = terminalNames
			case "Live":
				want = liveNames
			case "States":
				// Live \cup Terminal, or the live states spelt out \cup Terminal.
				if !strings.Contains(expr, `\cup Terminal`) {
					t.Errorf("%s: States == %s, want a union with Terminal", path, expr)
				}
				if len(got) > 0 {
					want = liveNames
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s == %s, Go's list gives %v", path, name, expr, want)
			}
		}
	}
	for _, spec := range []string{"JobLedger.tla", "JobTable.tla", "DurableLedger.tla", "SharedLedger.tla"} {
		if !defined[spec] {
			t.Errorf("%s defines no Terminal", spec)
		}
	}
	for path, cfg := range readGlob(t, filepath.Join("..", "..", "spec", "*.cfg")) {
		for _, m := range cfgState.FindAllStringSubmatch(cfg, -1) {
			want := allNames
			if strings.HasSuffix(m[1], "Outcomes") {
				want = terminalNames
			}
			for _, s := range tlaSet(m[2]) {
				if !slices.Contains(want, s) {
					t.Errorf("%s: %s = %s: %s is not one of %v", path, m[1], m[2], s, want)
				}
			}
		}
	}
}
