package linearizability_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/ledger"
	"github.com/jobledger/jobledger/linearizability"
)

// TestTenantHistoriesRecorded runs, on each store, submitters of three
// tenants against tenant bounds whose sum exceeds the ledger's, with
// enders and scoped readers of other tenants' jobs beside them, records
// the history on a logical clock and checks it: the two-level bound and
// the scope, together with the job and admission models.
func TestTenantHistoriesRecorded(t *testing.T) {
	const maxQueue, bound, tenants, callers, calls = 4, 2, 3, 6, 30
	for name, open := range recordedStores(ledger.Config{MaxQueue: maxQueue, JobTTL: -1, MaxCompleted: -1}) {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			defer l.Close()
			ctx := context.Background()
			var (
				clock atomic.Int64
				mu    sync.Mutex
				ops   []porcupine.Operation
				ids   []string // admitted, for the enders and readers
				wg    sync.WaitGroup
			)
			record := func(client int, call int64, in linearizability.Input, out linearizability.Output) {
				ret := clock.Add(1)
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
				if in.Kind == linearizability.Submit && out.Outcome == linearizability.OK {
					ids = append(ids, out.ID)
				}
				mu.Unlock()
			}
			pick := func(i int) string {
				mu.Lock()
				defer mu.Unlock()
				if len(ids) == 0 {
					return ""
				}
				return ids[i%len(ids)]
			}
			for c := range callers {
				tenant := fmt.Sprint("t", c%tenants)
				wg.Go(func() {
					for i := range calls {
						switch {
						case i%3 == 0 || c%2 == 0:
							in := linearizability.Input{Kind: linearizability.Submit, TaskID: fmt.Sprint(c, "-", i),
								Value: "r", Tenant: tenant, TenantMax: bound}
							call := clock.Add(1)
							id, _, err := l.Submit(ctx, ledger.Submission{TaskID: in.TaskID, Tenant: tenant, TenantMaxQueue: bound}, "r")
							out := linearizability.Output{Outcome: outcomeOf(t, err), ID: id}
							record(c, call, in, out)
						case i%3 == 1:
							id := pick(i + c)
							if id == "" {
								continue
							}
							in := linearizability.Input{Kind: linearizability.Fail, ID: id, Value: "boom"}
							call := clock.Add(1)
							_, err := l.Fail(ctx, id, errors.New("boom"))
							record(c, call, in, linearizability.Output{Outcome: outcomeOf(t, err)})
						default:
							id := pick(i * c)
							if id == "" {
								continue
							}
							in := linearizability.Input{Kind: linearizability.Snapshot, ID: id, Tenant: tenant, Scoped: true}
							call := clock.Add(1)
							snap, err := l.Snapshot(ledger.WithTenant(ctx, tenant), id)
							out := linearizability.Output{Outcome: outcomeOf(t, err)}
							if err == nil {
								st, ok := linearizability.ParseState(snap.State.String())
								require.True(t, ok)
								out.State, out.TaskID, out.Err = st, snap.TaskID, errText(snap.Err)
								out.Started, out.Completed = !snap.StartedAt.IsZero(), !snap.CompletedAt.IsZero()
							}
							record(c, call, in, out)
						}
					}
				})
			}
			wg.Wait()
			seen := map[linearizability.Outcome]int{}
			foreign := 0
			for _, op := range ops {
				in, out := op.Input.(linearizability.Input), op.Output.(linearizability.Output)
				seen[out.Outcome]++
				if in.Scoped && out.Outcome == linearizability.NotFound {
					foreign++
				}
			}
			require.Positive(t, seen[linearizability.TenantFull], "a tenant met its bound")
			require.Positive(t, foreign, "a reader met another tenant's job")
			t.Logf("%d operations: %v; %d scoped reads not found", len(ops), seen, foreign)
			rep := linearizability.Check(ops, linearizability.CheckConfig{MaxQueue: maxQueue, VisualizeDir: t.TempDir()})
			require.Equal(t, linearizability.Linearizable, rep.Verdict, "%s %s", rep.Message, rep.Visualization)
			requireInvariants(t, l)
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// outcomeOf classifies a store's error.
func outcomeOf(t *testing.T, err error) linearizability.Outcome {
	switch {
	case err == nil:
		return linearizability.OK
	case errors.Is(err, ledger.ErrQueueFull):
		return linearizability.QueueFull
	case errors.Is(err, ledger.ErrTenantQueueFull):
		return linearizability.TenantFull
	case errors.Is(err, ledger.ErrNotFound):
		return linearizability.NotFound
	case errors.Is(err, ledger.ErrTerminal):
		return linearizability.Terminal
	}
	t.Errorf("unexpected error %v", err)
	return linearizability.Unknown
}
