-- Schema 6: tenants.
--
-- tenant is the tenant that submitted the job, '' for none (every job of an
-- older file). Idempotency keys are each tenant's own, so the unique index
-- on the key becomes one on (tenant, key). jobs_tenant_admission gives a
-- page scoped to a tenant its order; jobs_tenant_live gives the writer a
-- tenant's live jobs, which it counts against the tenant's bound in the
-- transaction that inserts the job.
ALTER TABLE jobs ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
DROP INDEX jobs_idem_key;
CREATE UNIQUE INDEX jobs_idem_key ON jobs (tenant, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX jobs_tenant_admission ON jobs (tenant, n);
CREATE INDEX jobs_tenant_live ON jobs (tenant) WHERE seq IS NULL;
