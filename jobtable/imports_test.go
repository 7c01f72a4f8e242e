package jobtable_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports holds jobtable, in every build, to the standard library and
// the contract's leaf package, and the leaf to the standard library alone.
func TestImports(t *testing.T) {
	const leaf = "github.com/jobledger/jobledger/ledger/ledgertype"
	for dir, allowed := range map[string]string{".": leaf, filepath.Join("..", "ledger", "ledgertype"): ""} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go file in %s (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
				if !std && path != allowed {
					t.Errorf("%s imports %s: only the standard library%s", f, path, map[bool]string{true: " and " + allowed}[allowed != ""])
				}
			}
		}
	}
}
