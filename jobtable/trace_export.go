//go:build jobtable_trace

package jobtable

import "encoding/json"

// The trace log, for harnesses in other packages (package fuzz): the same
// log as the package's own traced runs, begun, given thread roles and
// ended from outside. Like the rest of the trace code it exists only
// with the tag jobtable_trace; a normal build has none of it.

// TraceBegin starts a log. No table call may be in flight, and one log
// runs at a time in a process.
func TraceBegin() { traceBegin() }

// TraceAs gives the calling goroutine a thread role of spec/JobTable.tla,
// named as spec/trace.mjs reads it (s1, r1, t1, p1, w1, m1 ...); "" takes
// it away. A goroutine without a role logs nothing.
func TraceAs(role string) { traceAs(role) }

// TraceNote logs an event the harness itself observes, on job id (""
// for none): MisuseSkip, a misuser that leaves TakeRequest out (a step of
// the spec's misuser); WaitTimeout, a wait that never returned, and Panic,
// a call that panicked, which no spec action matches.
func TraceNote(action, id string) { traceNote(action, id) }

// TraceEnd stops the log and returns it as ndjson, one event a line. No
// table call may be in flight.
func TraceEnd() ([]byte, error) { return writeTrace(traceEnd()) }

// TraceHead is what a trace's first line says: the table's configuration,
// which run it is (a seed or a name), and whether keyed submitters took
// part. Every event names its critical sections (trace_section.go), so the
// line says sections true.
type TraceHead struct {
	MaxQueue, MaxCompleted int
	Seed                   *uint64 // nil: the run is named by Name
	Name                   string
	Keyed                  bool
}

// Line returns the header line spec/trace.mjs reads, newline included.
func (h TraceHead) Line() ([]byte, error) {
	type config struct {
		MaxQueue     int
		MaxCompleted int
	}
	b, err := json.Marshal(struct {
		Config   config  `json:"config"`
		Seed     *uint64 `json:"seed,omitempty"`
		Name     string  `json:"name,omitempty"`
		Keyed    bool    `json:"keyed"`
		Sections bool    `json:"sections"`
	}{config{h.MaxQueue, h.MaxCompleted}, h.Seed, h.Name, h.Keyed, true})
	return append(b, '\n'), err
}
