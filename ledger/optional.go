package ledger

import "context"

// Checker is a store that can check its own invariants: for tests, stress
// runs and fuzzing. Every store of this module is one.
type Checker interface {
	// CheckInvariants reports every invariant of the contract the store
	// violates, joined, or nil. It is exact only while no call is in
	// flight.
	CheckInvariants() error
}

// Recoverer is a durable store, one whose jobs outlive its process.
type Recoverer interface {
	// Recovered lists the jobs that were PENDING when the store was
	// opened, left by an earlier process, oldest first: the caller runs
	// them (their deadlines still count from CreatedAt). It is ErrClosed
	// after Close.
	Recovered(ctx context.Context) ([]Snapshot, error)
}

// As finds T, an optional interface of a store (Checker, Recoverer, a
// health report; Shared, whose requests need decoding, is AsShared's), in
// l itself, or else in the store of bytes that WithCodecs wrapped in l.
func As[T any](l any) (T, bool) {
	if t, ok := l.(T); ok {
		return t, true
	}
	if c, ok := l.(interface{ bytes() Ledger[[]byte, []byte] }); ok {
		t, ok := c.bytes().(T)
		return t, ok
	}
	var zero T
	return zero, false
}

// bytes is the store of bytes c converts for, for As.
func (c *coded[Req, Res]) bytes() Ledger[[]byte, []byte] { return c.Ledger }
