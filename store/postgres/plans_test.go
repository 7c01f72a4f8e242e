package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/store/postgres"
)

// TestBatchPlansScanNoTable: the generic plans a store's sessions make for
// its batch statements and the keeper's renewal on an empty jobs table, as
// a new store's are, read jobs by a key of an index. A plan that scans the
// table, or a whole index, is kept while the table grows, and makes every
// batch cost the size of the table.
func TestBatchPlansScanNoTable(t *testing.T) {
	t.Parallel()
	s, err := postgres.Open(ctx, newDatabase(t), ledger.Config{MaxQueue: 8}, postgres.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.WithConn(ctx, func(c *pgx.Conn) error {
		var jit string
		if err := c.QueryRow(ctx, "SHOW jit").Scan(&jit); err != nil {
			return err
		}
		require.Equal(t, "off", jit, "a statement the planner prices as a scan would be compiled")
		return nil
	}))
	for name, q := range postgres.BatchQueries {
		t.Run(name, func(t *testing.T) {
			var plan string
			err := s.WithConn(ctx, func(c *pgx.Conn) error {
				sd, err := c.Prepare(ctx, "plan_check", q)
				if err != nil {
					return err
				}
				defer c.Deallocate(context.Background(), "plan_check")
				nulls := strings.TrimSuffix(strings.Repeat("NULL,", len(sd.ParamOIDs)), ",")
				rows, err := c.Query(ctx, fmt.Sprintf("EXPLAIN (COSTS OFF) EXECUTE plan_check(%s)", nulls))
				if err != nil {
					return err
				}
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				plan = strings.Join(lines, "\n")
				return err
			})
			require.NoError(t, err)
			require.NotContains(t, plan, "Seq Scan on jobs", plan)
			for _, scan := range unboundedScans(plan) {
				t.Errorf("%s reads an index of jobs whole, with no condition on its keys:\n%s", scan, plan)
			}
		})
	}
}

// unboundedScans returns the index scans of jobs in plan that have no
// Index Cond: each reads the whole index (every job, or every live job
// for a partial one), whatever the arguments. A scan of jobs_claimable is
// not one: the claim reads it in order and stops at its LIMIT.
func unboundedScans(plan string) []string {
	lines := strings.Split(plan, "\n")
	var out []string
	for i, line := range lines {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "->"))
		if !strings.Contains(l, "Scan") || !strings.Contains(l, " on jobs") || strings.Contains(l, "jobs_claimable") {
			continue
		}
		if !strings.HasPrefix(l, "Index Scan") && !strings.HasPrefix(l, "Index Only Scan") && !strings.HasPrefix(l, "Bitmap Index Scan") {
			continue
		}
		bounded := false
		depth := indent(line)
		for _, next := range lines[i+1:] {
			if indent(next) <= depth || strings.Contains(next, "->") {
				break
			}
			if strings.Contains(next, "Index Cond:") {
				bounded = true
			}
		}
		if !bounded {
			out = append(out, l)
		}
	}
	return out
}

// indent is the number of leading spaces of line.
func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
