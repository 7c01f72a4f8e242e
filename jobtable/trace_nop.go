//go:build !jobtable_trace

package jobtable

import "sync"

// The trace hooks, compiled out: every one is empty and inlines to nothing,
// so a normal build runs exactly the code it would without them. The build
// tag jobtable_trace swaps in trace.go, which logs each step as the spec
// action it implements (docs/verification.md, "Trace validation"), and
// trace_section.go, whose mutexes number their critical sections; here
// they are sync.Mutex itself.

type (
	jobMutex   = sync.Mutex
	tableMutex = sync.Mutex
)

func traceAtomic()                                                            {}
func traceSubmitLoad(int32)                                                   {}
func traceSubmitCAS(ok bool, _ int32) bool                                    { return ok }
func traceSubmitInsert[Req, Res any](*Table[Req, Res], string)                {}
func traceLookup(string, bool)                                                {}
func traceStart[Req, Res any](*job[Req, Res], error)                          {}
func traceTake[Req, Res any](*job[Req, Res], error)                           {}
func traceEndCheck[Req, Res any](*job[Req, Res], State, bool)                 {}
func traceTerminated[Req, Res any](*job[Req, Res], int32)                     {}
func traceWaitCheck[Req, Res any](*job[Req, Res], State)                      {}
func traceWaitRegister[Req, Res any](*job[Req, Res])                          {}
func traceSnapshot[Req, Res any](*job[Req, Res], Snapshot)                    {}
func traceResult[Req, Res any](*job[Req, Res], Snapshot)                      {}
func traceWaitWoken[Req, Res any](*job[Req, Res])                             {}
func traceWaitCancel[Req, Res any](*job[Req, Res])                            {}
func traceWake[Req, Res any](*job[Req, Res])                                  {}
func traceEvict[Req, Res any](*Table[Req, Res], *job[Req, Res])               {}
func traceList[Req, Res any](*Table[Req, Res], ListQuery, []Snapshot, uint64) {}
func traceKeyed(key, id string, err error)                                    {}
func traceKeyedInsert[Req, Res any](*Table[Req, Res], string, string)         {}
