//go:build !sqlite_trace

package sqlite

// The trace hooks, compiled out: each is empty and inlines to nothing, so
// a normal build runs exactly the code it would without them. The build
// tag sqlite_trace swaps in trace.go, which logs each committed write,
// each Open and each Close as spec/DurableLedger.tla's actions
// (docs/verification.md, "Trace validation of the SQLite store").

func traceBatchBegin()                              {}
func traceEvicted(*view) uint64                     { return 0 }
func traceApplied(*op, reply, *view, int64, uint64) {}
func traceCommitted(*Store)                         {}
func traceFailedRunning([]string)                   {}
func traceOpened(*Store, *view, int64)              {}
func traceClosed()                                  {}
