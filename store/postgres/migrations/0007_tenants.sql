-- Schema 7: tenants.
--
-- tenant is the tenant that submitted the job, '' for none (every job of an
-- older schema). Idempotency keys are each tenant's own, so the unique
-- index on the key becomes one on (tenant, key). jobs_tenant_admission
-- gives a page scoped to a tenant its order; jobs_tenant_live gives an
-- admission the live jobs of the batch's tenants, which it counts while it
-- holds the ledger row's lock, the lock every admission takes first: so a
-- tenant's count and the insertion it allows are one step across replicas.
ALTER TABLE jobs ADD COLUMN tenant text NOT NULL DEFAULT '';
DROP INDEX jobs_idem_key;
CREATE UNIQUE INDEX jobs_idem_key ON jobs (tenant, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX jobs_tenant_admission ON jobs (tenant, n);
CREATE INDEX jobs_tenant_live ON jobs (tenant) WHERE seq IS NULL;
