// Command doctables writes the tables of docs/ that restate a list the
// repository already holds, so that the list stays the one source: the
// mutants of scripts/mutants.txt and the spec mutations of
// spec/mutations.json. A table sits between two marker lines,
//
//	<!-- generated: KIND [ARG] by scripts/mutant-table; do not edit -->
//	<!-- /generated -->
//
// where KIND is "mutants" or "spec-mutations" (ARG: the module, such as
// JobTable.tla). Run from the repository root:
//
//	go run ./internal/doctables          rewrite the tables in place
//	go run ./internal/doctables -check   fail, changing nothing, when a
//	                                     table differs from its list
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// docs are the files whose generated tables are kept.
var docs = []string{"docs/verification.md", "docs/spec.md"}

const end = "<!-- /generated -->"

var begin = regexp.MustCompile(`^<!-- generated: ([a-z-]+)(?: (\S+))? by scripts/mutant-table; do not edit -->$`)

func main() {
	check := flag.Bool("check", false, "fail when a table differs from its list, changing nothing")
	flag.Parse()
	stale := false
	for _, doc := range docs {
		old, err := os.ReadFile(doc)
		if err != nil {
			fail(err)
		}
		gen, err := rewrite(old)
		if err != nil {
			fail(fmt.Errorf("%s: %w", doc, err))
		}
		if bytes.Equal(old, gen) {
			continue
		}
		if *check {
			fmt.Fprintf(os.Stderr, "doctables: %s: a generated table differs from its list; run scripts/mutant-table\n", doc)
			stale = true
			continue
		}
		if err := os.WriteFile(doc, gen, 0o644); err != nil {
			fail(err)
		}
	}
	if stale {
		os.Exit(1)
	}
	if *check {
		fmt.Println("doctables: ok")
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "doctables:", err)
	os.Exit(1)
}

// rewrite returns doc with every generated table written afresh.
func rewrite(doc []byte) ([]byte, error) {
	var out bytes.Buffer
	lines := strings.SplitAfter(string(doc), "\n")
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := begin.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimRight(lines[j], "\n") != end {
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: %q has no %q after it", i+1, m[0], end)
		}
		table, err := generate(m[1], m[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out.WriteString(table)
		i = j - 1
	}
	return out.Bytes(), nil
}

func generate(kind, arg string) (string, error) {
	switch kind {
	case "mutants":
		return mutants("scripts/mutants.txt")
	case "spec-mutations":
		return specMutations("spec/mutations.json", arg)
	}
	return "", fmt.Errorf("unknown table %q", kind)
}

// mutants renders scripts/mutants.txt: a mutant a line, its gates
// (comma-separated), then what it breaks; # starts a comment.
func mutants(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString("| mutant | first gates | what it breaks |\n| --- | --- | --- |\n")
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return "", fmt.Errorf("%s: %q names no gate or says not what it breaks", path, line)
		}
		gates := strings.Split(fields[1], ",")
		for i, g := range gates {
			gates[i] = "`" + cell(g) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", fields[0], strings.Join(gates, ", "), cell(strings.Join(fields[2:], " ")))
		rows++
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if rows == 0 {
		return "", errors.New(path + " lists no mutant")
	}
	return b.String(), nil
}

// specMutations renders the mutations of spec/mutations.json whose edits
// apply to module.
func specMutations(path, module string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var list struct {
		Mutations []struct {
			Name        string
			Description string
			Checker     string
			RefutedBy   []struct{ Cfg, Violates string }
			Edits       []struct{ File string }
		}
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	var b strings.Builder
	b.WriteString("| mutation | what it changes | refuted by | violation |\n| --- | --- | --- | --- |\n")
	rows := 0
	for _, m := range list.Mutations {
		file := "JobTable.tla"
		if len(m.Edits) > 0 && m.Edits[0].File != "" {
			file = m.Edits[0].File
		}
		if file != module {
			continue
		}
		name := "`" + m.Name + "`"
		if m.Checker == "tlc" {
			name += " (TLC)"
		}
		var cfgs, viols []string
		for _, r := range m.RefutedBy {
			cfgs = append(cfgs, "`"+strings.TrimSuffix(r.Cfg, ".cfg")+"`")
			viols = append(viols, "`"+r.Violates+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, cell(m.Description), strings.Join(cfgs, ", "), strings.Join(slices.Compact(viols), ", "))
		rows++
	}
	if rows == 0 {
		return "", fmt.Errorf("%s has no mutation of %q", path, module)
	}
	return b.String(), nil
}

// cell escapes s for a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
