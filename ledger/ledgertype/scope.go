package ledgertype

import "context"

// scopeKey is the context key of a tenant scope.
type scopeKey struct{}

// WithTenant returns a context whose calls see only tenant's jobs: every
// call of a store that names a job by id answers ErrNotFound for a job of
// another tenant, exactly as for an id that no job has, and List lists only
// tenant's jobs. A context without a scope sees every job (an operator, the
// runner, a ledger without tenants).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, scopeKey{}, tenant)
}

// TenantScope returns the tenant that ctx is scoped to, and false when it
// sees every job.
func TenantScope(ctx context.Context) (tenant string, scoped bool) {
	tenant, scoped = ctx.Value(scopeKey{}).(string)
	return tenant, scoped
}

// Sees reports whether a call under ctx may see a job of tenant owner.
func Sees(ctx context.Context, owner string) bool {
	tenant, scoped := TenantScope(ctx)
	return !scoped || tenant == owner
}
