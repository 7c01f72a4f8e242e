package linearizability

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Tenants (ledger.Submission.Tenant, ledger.WithTenant) add two checks to
// a table-level history, each a model of its own:
//
//   - TenantAdmissionModel, global: the admission counter of AdmissionModel
//     with each tenant's live jobs beside it. A submit is admitted only
//     below both bounds, its tenant's (Input.TenantMax) and the ledger's; a
//     TenantFull refusal is legal only at the tenant's bound and a
//     QueueFull only at the ledger's with the tenant below its own (the
//     tenant's bound is checked first). The global bound couples every
//     tenant, so the projection is one history, not partitioned by tenant.
//   - TenantScopeModel, partitioned by job: a call scoped to a tenant
//     (Input.Scoped) that names another tenant's job answers NotFound, as
//     for an id no job has. Such calls leave the job history: JobModel
//     reads a NotFound of a live job as its disappearance.

// tenantState is TenantAdmissionModel's state: the depth and each
// tenant's live jobs (tenants with none left out). A step copies it.
type tenantState struct {
	depth int
	live  map[string]int
}

func (s tenantState) with(tenant string, delta int) tenantState {
	live := maps.Clone(s.live)
	if live == nil {
		live = map[string]int{}
	}
	live[tenant] += delta
	if live[tenant] == 0 {
		delete(live, tenant)
	}
	return tenantState{depth: s.depth + delta, live: live}
}

func (s tenantState) String() string {
	names := slices.Sorted(maps.Keys(s.live))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q: %d", n, s.live[n])
	}
	return fmt.Sprintf("depth %d, live {%s}", s.depth, strings.Join(parts, ", "))
}

// TenantAdmissionModel returns the global specification of the two-level
// bound for a ledger bounded by maxQueue, over the projection
// tenantAdmissionProjection makes (each terminal call carries the tenant
// of its job).
func TenantAdmissionModel(maxQueue int) porcupine.Model {
	limit := max(maxQueue, 0)
	return porcupine.Model{
		Init: func() any { return tenantState{} },
		Step: func(state, input, output any) (bool, any) {
			return stepTenantAdmission(limit, state.(tenantState), input.(Input), output.(Output))
		},
		Equal: func(a, b any) bool {
			x, y := a.(tenantState), b.(tenantState)
			return x.depth == y.depth && maps.Equal(x.live, y.live)
		},
		DescribeOperation: func(input, output any) string { return Describe(input.(Input), output.(Output)) },
		DescribeState:     func(state any) string { return state.(tenantState).String() + fmt.Sprintf(" of %d", limit) },
	}
}

func stepTenantAdmission(limit int, s tenantState, in Input, out Output) (bool, any) {
	switch {
	case in.Kind == Submit:
		tenantRoom := in.TenantMax <= 0 || s.live[in.Tenant] < in.TenantMax
		switch out.Outcome {
		case OK:
			return tenantRoom && s.depth < limit, s.with(in.Tenant, 1)
		case TenantFull:
			return !tenantRoom, s
		case QueueFull:
			return tenantRoom && s.depth >= limit, s
		case Unknown:
			if tenantRoom && s.depth < limit {
				return true, s.with(in.Tenant, 1)
			}
			return true, s
		}
	case in.Kind.Terminal():
		switch out.Outcome {
		case OK:
			return s.live[in.Tenant] > 0 && s.depth > 0, s.with(in.Tenant, -1)
		case Unknown:
			if s.live[in.Tenant] > 0 && s.depth > 0 {
				return true, s.with(in.Tenant, -1)
			}
			return true, s
		}
	}
	return false, s
}

// owners maps each job a Submit admitted (or may have) to its tenant.
func owners(history []porcupine.Operation) map[string]string {
	own := map[string]string{}
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Kind == Submit && out.ID != "" {
			own[out.ID] = in.Tenant
		}
	}
	return own
}

// hasTenants reports whether history holds a submit of a tenant, a
// tenant's bound or refusal, or a scoped call.
func hasTenants(history []porcupine.Operation) bool {
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		if in.Tenant != "" || in.Scoped || in.TenantMax > 0 || out.Outcome == TenantFull {
			return true
		}
	}
	return false
}

// tenantAdmissionProjection is the admission projection with the refused
// submits of a tenant kept and each terminal call given its job's tenant.
func tenantAdmissionProjection(history []porcupine.Operation) []porcupine.Operation {
	own := owners(history)
	var p []porcupine.Operation
	for _, op := range admissionProjection(history) {
		in := op.Input.(Input)
		if in.Kind.Terminal() {
			in.Tenant = own[in.ID]
			op.Input = in
		}
		p = append(p, op)
	}
	for _, op := range history {
		if op.Input.(Input).Kind == Submit && op.Output.(Output).Outcome == TenantFull {
			p = append(p, op)
		}
	}
	return p
}

// foreignScoped splits history into the calls JobModel judges and those
// scoped to a tenant other than their job's, which only TenantScopeModel
// judges, and returns the scope history: every scoped call, with the
// submit that created its job.
func foreignScoped(history []porcupine.Operation) (kept, scope []porcupine.Operation) {
	own := owners(history)
	named := map[string]bool{}
	for _, op := range history {
		in := op.Input.(Input)
		if in.Scoped && in.ID != "" {
			named[in.ID] = true
		}
	}
	for _, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		switch {
		case in.Scoped && in.ID != "":
			scope = append(scope, op)
			if owner, ok := own[in.ID]; ok && owner != in.Tenant {
				continue // not the job's own tenant: only the scope model's
			}
		case in.Kind == Submit && named[out.ID]:
			scope = append(scope, op)
		}
		kept = append(kept, op)
	}
	return kept, scope
}

// scopeJob is the job a scope history's operation names: the one a submit
// created, or the one a call names.
func scopeJob(op porcupine.Operation) string {
	if in := op.Input.(Input); in.Kind != Submit {
		return in.ID
	}
	return op.Output.(Output).ID
}

// noOwner is TenantScopeModel's state before its job's submit.
const noOwner = "\x00none"

// TenantScopeModel returns the specification of scoped calls, partitioned
// by job: its state is the job's tenant once its submit took effect, and a
// call scoped to another tenant (or made before the job exists) answers
// NotFound.
func TenantScopeModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byJob := map[string][]porcupine.Operation{}
			for _, op := range history {
				id := scopeJob(op)
				byJob[id] = append(byJob[id], op)
			}
			var parts [][]porcupine.Operation
			for _, id := range slices.Sorted(maps.Keys(byJob)) {
				parts = append(parts, byJob[id])
			}
			return parts
		},
		Init: func() any { return noOwner },
		Step: func(state, input, output any) (bool, any) {
			owner, in, out := state.(string), input.(Input), output.(Output)
			if in.Kind == Submit {
				if out.Outcome == OK || out.Outcome == Unknown {
					return true, in.Tenant
				}
				return true, owner
			}
			return out.Outcome == NotFound || out.Outcome == Unknown || owner == in.Tenant, owner
		},
		DescribeOperation: func(input, output any) string { return Describe(input.(Input), output.(Output)) },
		DescribeState: func(state any) string {
			if state.(string) == noOwner {
				return "no job yet"
			}
			return fmt.Sprintf("a job of %q", state.(string))
		},
	}
}

// checkTenants runs the two tenant models on a table-level history that
// has tenants: the scope model on scope, the admission model on the
// projection of jobHistory.
func checkTenants(rep Report, cfg CheckConfig, scope, jobHistory []porcupine.Operation) Report {
	if len(scope) > 0 {
		m := TenantScopeModel()
		parts := m.Partition(scope)
		named := make([]jobPartition, len(parts))
		for i, p := range parts {
			named[i] = jobPartition{ID: "job " + scopeJob(p[0]), Ops: p}
		}
		var done bool
		if rep, _, done = checkModel(rep, cfg, m, "tenant", scope, named); done {
			return rep
		}
	}
	proj := tenantAdmissionProjection(jobHistory)
	rep, _, _ = checkModel(rep, cfg, TenantAdmissionModel(cfg.MaxQueue), "tenant", proj,
		[]jobPartition{{ID: "the two-level bound", Ops: proj}})
	return rep
}
