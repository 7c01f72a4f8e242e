// Package ledgertest is the conformance suite of the ledger's contract:
// every store runs it unchanged, through the ledger.Ledger interface alone,
// and passes it. Its rules are jobtable's own tests made store-neutral: the
// state machine, admission, take-once, retention, waiting, timestamps,
// idempotency keys (replay, conflict, no check without a key, eviction
// with the job, one job per key under a race), listing (newest first,
// filters, the limit's cap, bad queries and cursors, a cursor stable under
// admissions and evictions between pages and under concurrent ones), the
// design's stress, and, for a store that survives a restart (a
// ledger.Recoverer), the restart semantics of package ledger's doc. A store
// that is a ledger.Checker has its invariants checked after every rule.
//
// # Usage
//
// A store's test file hands Run an opener:
//
//	func TestConformance(t *testing.T) {
//		ledgertest.Run(t, ledgertest.Store{
//			Open: func(t *testing.T, cfg ledger.Config) ledger.Ledger[string, string] {
//				l, err := ledger.NewMemory[string, string](cfg)
//				require.NoError(t, err)
//				return l
//			},
//		})
//	}
//
// A durable store also sets Store.Restart; without it the restart rules
// are skipped, saying why. Each rule is a subtest named for what it
// checks (go test -run 'Conformance/Wait' runs the waiting rules).
//
// # What a store must allow
//
//   - Open honours every field of the Config, Now above all: the suite
//     injects a fake clock and moves it by hand, and never sleeps to let
//     time pass. It leaves NewID nil, so each store's own ids are tested.
//   - The suite compares a snapshot's times with time.Time.Equal and its
//     error by message, not by identity: a durable store gives back an
//     error it stored as text, and a time it stored as a number.
//   - A durable store may take a millisecond or two a write. The counts
//     below keep the suite to a few seconds on the memory store and to
//     about half a minute at that speed; the rules that repeat a race run
//     for a minimum of rounds and of wall time, then stop.
package ledgertest
