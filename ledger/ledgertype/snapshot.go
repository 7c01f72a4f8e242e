package ledgertype

import "time"

// Snapshot is a consistent view of one job, as a store read it at one
// moment; a terminal job's final snapshot never changes.
type Snapshot struct {
	ID     string
	TaskID string // the request's own id, kept after the request is taken
	State  State
	// Err is the error the job was failed or timed out with; nil in every
	// other state.
	Err error
	// CreatedAt is set on admission, StartedAt on start, CompletedAt on
	// the terminal transition; each is the zero time until then.
	CreatedAt, StartedAt, CompletedAt time.Time
}

// Stats is a cheap view of a store for metrics.
type Stats struct {
	Depth      int    // admitted jobs not yet terminal
	Jobs       int    // jobs held, terminal or not
	Retained   int    // terminal jobs held for their results
	EvictedTTL uint64 // terminal jobs evicted by JobTTL since the store opened
	EvictedLRU uint64 // terminal jobs evicted beyond MaxCompleted since the store opened
}

// Submission is what a store keeps beside a job's request: the request's
// own id and its idempotency key. End a literal with field names: the
// trailing blank field forbids positional ones.
type Submission struct {
	// TaskID is the request's own id, echoed in every Snapshot.
	TaskID string
	// Key is the idempotency key, "" for none. Digest is the request's
	// fingerprint, compared with the retained job's under the same Key;
	// it is ignored without a Key.
	Key, Digest string

	_ struct{} // forbid positional literals
}
