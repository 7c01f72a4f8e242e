// Package ledgertype holds the types of the ledger contract that every
// store, the HTTP layer and the wire share: the job states, listed once. It
// imports only the standard library, so the in-memory store can use it
// without a conversion (as River's rivertype serves its drivers).
package ledgertype
