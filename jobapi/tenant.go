package jobapi

import (
	"context"
	"net/http"

	"github.com/jobledger/jobledger/jobapi/auth"
	"github.com/jobledger/jobledger/ledger"
)

// Tenants: a job belongs to the tenant of the token that submitted it
// (auth.Identity), and every route that names or lists jobs sees only the
// caller's own: another tenant's job answers exactly as an id that no job
// has, because the store answers both from one code path
// (ledger.WithTenant). A token of role admin sees every job; so does every
// caller of a server without tokens, whose jobs all belong to tenant "".

// scoped is the context of r's calls to the store that name or list jobs:
// scoped to the caller's tenant, unless the caller is an admin or carries
// no identity (no token file).
func scoped(r *http.Request) context.Context {
	id, ok := auth.FromContext(r.Context())
	if !ok || id.Role == auth.RoleAdmin {
		return r.Context()
	}
	return ledger.WithTenant(r.Context(), id.Tenant)
}

// isScoped reports whether ctx sees only one tenant's jobs.
func isScoped(ctx context.Context) bool {
	_, ok := ledger.TenantScope(ctx)
	return ok
}

// tenancy is who a submit is for: the caller's tenant and the bound on its
// live jobs (the token file's max_queue for the tenant, else
// Config.TenantMaxQueue; 0 for none), and whether the caller named one
// (a token: its tenant is then a label of the per-tenant metrics).
type tenancy struct {
	tenant string
	bound  int
	named  bool
}

// tenancyOf is the tenancy of r's caller.
func (s *Server) tenancyOf(r *http.Request) tenancy {
	id, ok := auth.FromContext(r.Context())
	t := tenancy{tenant: id.Tenant, bound: s.cfg.TenantMaxQueue, named: ok}
	if ok && id.MaxQueue > 0 {
		t.bound = id.MaxQueue
	}
	return t
}
