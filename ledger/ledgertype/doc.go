// Package ledgertype holds the types of the ledger contract that every
// store, the HTTP layer and the wire share: the job states (listed once),
// the snapshot of a job, the stats, the Config with its defaults, and the
// sentinel errors. It imports only the standard library, so the in-memory
// store uses it without a conversion (as River's rivertype serves its
// drivers).
package ledgertype
