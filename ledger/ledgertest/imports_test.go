package ledgertest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImports holds the suite's import graph to what a store's own tests
// need: importing ledgertest must not pull in the HTTP API, its client,
// a store, or their drivers and metrics.
func TestImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH")
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	const mod = "github.com/jobledger/jobledger/"
	require.Contains(t, deps, mod+"internal/stress", "the listing is of every dependency, not only the direct ones")
	forbidden := []string{mod + "jobapi", mod + "client", mod + "store/", "github.com/jackc/pgx", "github.com/prometheus/"}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("ledgertest depends on %s", d)
			}
		}
	}
}
