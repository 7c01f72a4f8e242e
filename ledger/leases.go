package ledger

import (
	"context"
	"time"
)

// LeaseReporter is what a shared store (one with a Shared side) may add,
// found with As: a report of the leases its replicas hold, for operators.
type LeaseReporter interface {
	// Leases lists, by replica name, the replicas that hold a lease on a
	// live job now. A replica with no job in hand holds none and is not
	// listed.
	Leases(ctx context.Context) ([]ReplicaLeases, error)
}

// ReplicaLeases is one replica's leases, in the store's time.
type ReplicaLeases struct {
	Replica string
	Jobs    int       // live jobs it holds under a lease
	Next    time.Time // when the first of its leases lapses unless renewed
	// Lapsed says that a lease of its has lapsed: the replica has stopped
	// renewing (it died, or lost the database), and a reaper will end
	// those jobs FAILED "worker lost".
	Lapsed bool
}
