//go:build jobtable_trace

package jobtable

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jobledger/jobledger/ledger/ledgertype"
)

// Trace logging for trace validation (spec/trace.mjs checks the log
// against spec/JobTable.tla). Built only with the tag jobtable_trace;
// trace_nop.go stands in for it otherwise.
//
// Each hook logs one spec action at the point where Go performs it: inside
// the critical section for a locked step; for a lock-free atomic, the
// operation runs between traceAtomic, which takes the trace lock, and the
// hook that logs it and releases the lock, so the order of the log is the
// order in which the atomics took effect. A goroutine logs only once the
// harness has given it a thread role (traceAs: s1, r1, t1, w1 ...), so the
// package's other tests run unchanged with the tag. Each event also names
// the critical sections its goroutine was in (trace_section.go).

// traceEvent is one line of the log. D is the depth Go knows at that
// step, N and L the id map's and the retention list's lengths. JS and TS
// number the critical section of the job's mutex and of the table mutex
// the event was logged in; each is left out when the goroutine held no
// such section.
type traceEvent struct {
	A  string `json:"a"`            // the spec action
	T  string `json:"t"`            // the thread role
	J  string `json:"j,omitempty"`  // the job id
	R  string `json:"r,omitempty"`  // the call's result: ok or the error's name
	St string `json:"st,omitempty"` // the state stored or read
	E  string `json:"e,omitempty"`  // a snapshot read: its error set (yes, no)
	C  string `json:"c,omitempty"`  // a snapshot read: its completion time set
	D  *int32 `json:"d,omitempty"`
	N  *int   `json:"n,omitempty"`
	L  *int   `json:"l,omitempty"`
	K  string `json:"k,omitempty"` // the idempotency key of a keyed submit
	JS *int64 `json:"js,omitempty"`
	TS *int64 `json:"ts,omitempty"`
	// The listing (spec/Listing.tla): O is the admission ordinal of the
	// job inserted or evicted. A page of List logs B, the cursor it was
	// called with, Os and Ids, the ordinals and the ids it listed in its
	// order, Nx, its next cursor, Lim, its limit, and F, the state its
	// filter keeps (left out for none).
	O   *uint64  `json:"o,omitempty"`
	B   *uint64  `json:"b,omitempty"`
	Os  []uint64 `json:"os,omitempty"`
	Ids []string `json:"ids,omitempty"`
	Nx  *uint64  `json:"nx,omitempty"`
	Lim *int     `json:"lim,omitempty"`
	F   string   `json:"f,omitempty"`
}

var tracer struct {
	on atomic.Bool
	mu sync.Mutex // the trace lock: orders the log
	// holder is the goroutine that took mu with traceAtomic and holds it
	// (0: none), so that one that panics before its hook released it can
	// still note the panic (traceNote) and release it.
	holder atomic.Uint64
	roles  sync.Map // goroutine id -> role
	events []traceEvent
}

// traceBegin starts a log; traceEnd stops it and returns it. Neither may
// run while a table call is in flight.
func traceBegin() {
	tracer.events = nil
	tracer.on.Store(true)
}

func traceEnd() []traceEvent {
	tracer.on.Store(false)
	tracer.roles.Clear()
	sectionsHeld.Clear()
	ev := tracer.events
	tracer.events = nil
	return ev
}

// traceAs gives the calling goroutine a thread role; "" takes it away.
func traceAs(role string) {
	if role == "" {
		tracer.roles.Delete(goid())
		return
	}
	tracer.roles.Store(goid(), role)
}

// traceNote logs an event the harness itself observes (a waiter that gave
// up, a call that panicked); the checker has no action for it. A call that
// panicked between traceAtomic and its hook still holds the trace lock:
// the note is logged under it, and releases it.
func traceNote(action, id string) {
	if !tracer.on.Load() {
		return
	}
	traceLog(nil, traceEvent{A: action, J: id}, tracer.holder.Load() == goid())
}

func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	n, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return n
}

// traceLog appends the events under the trace lock; held says the caller
// took it with traceAtomic. jm is the mutex of the job the events name
// (nil for none): each event carries the section of it, and of the table
// mutex, that the goroutine holds.
func traceLog(jm *jobMutex, e traceEvent, held bool, more ...traceEvent) {
	if !tracer.on.Load() {
		return
	}
	if !held {
		tracer.mu.Lock()
	}
	traceAppendLocked(jm, e, more...)
	tracer.holder.Store(0)
	tracer.mu.Unlock()
}

// tracePut appends e under the trace lock that the caller took with
// traceAtomic, and keeps it.
func tracePut(jm *jobMutex, e traceEvent) {
	if !tracer.on.Load() {
		return
	}
	traceAppendLocked(jm, e)
}

// traceAppendLocked appends e and then more, each with the calling
// goroutine's role and sections, if it has a role. tracer.mu must be held.
func traceAppendLocked(jm *jobMutex, e traceEvent, more ...traceEvent) {
	g := goid()
	role, ok := tracer.roles.Load(g)
	if !ok {
		return
	}
	e.T = role.(string)
	e.JS, e.TS = sectionsOf(g, jm)
	tracer.events = append(tracer.events, e)
	for _, m := range more {
		m.T, m.JS, m.TS = e.T, e.JS, e.TS
		tracer.events = append(tracer.events, m)
	}
}

// sectionsOf returns the sections of jm (nil: none) and of the table
// mutex that goroutine g holds.
func sectionsOf(g uint64, jm *jobMutex) (js, ts *int64) {
	h := heldBy(g, false)
	if jm != nil {
		js = h.section(&jm.countedMutex)
	}
	return js, h.section(nil)
}

func traceAtomic() {
	if tracer.on.Load() {
		tracer.mu.Lock()
		tracer.holder.Store(goid())
	}
}

func ptr[T any](v T) *T { return &v }

func errName(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{nil, "ok"}, {ErrNotFound, "ErrNotFound"}, {ErrNotPending, "ErrNotPending"},
		{ErrTerminal, "ErrTerminal"}, {ErrRequestTaken, "ErrRequestTaken"},
		{ErrKeyConflict, "ErrKeyConflict"}, {ErrQueueFull, "ErrQueueFull"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return err.Error()
}

// endAction names the terminal call that ends a job in state s.
func endAction(s State) string {
	switch s {
	case ledgertype.Done:
		return "Finish"
	case ledgertype.Failed:
		return "Fail"
	}
	return "Timeout"
}

func traceSubmitLoad(d int32) {
	traceLog(nil, traceEvent{A: "SubmitLoad", D: ptr(d)}, true)
}

func traceSubmitCAS(ok bool, d1 int32) bool {
	e := traceEvent{A: "SubmitCAS", R: "retry"}
	if ok {
		e.R, e.D = "ok", ptr(d1)
	}
	traceLog(nil, e, true)
	return ok
}

// After traceAtomic, t.mu held: eviction and insertion are one step. The
// job inserted is the newest of the admission order: its ordinal is the
// order's last.
func traceSubmitInsert[Req, Res any](t *Table[Req, Res], id string) {
	traceLog(nil, insertEventLocked(t, id, ""), true)
}

// insertEventLocked is the SubmitInsert of job id, under key ("" for
// none), with the map's and the retention list's lengths and the job's
// ordinal, the newest of the admission order. t.mu must be held.
func insertEventLocked[Req, Res any](t *Table[Req, Res], id, key string) traceEvent {
	return traceEvent{A: "SubmitInsert", J: id, K: key, N: ptr(t.jobs.live), L: ptr(t.retained.len()),
		O: ptr(t.order.at(t.order.len() - 1).ord)}
}

// After traceAtomic, t.mu held: retention evicts j, in the step of the
// insertion that follows (the trace lock stays held); j is still in the
// admission order.
func traceEvict[Req, Res any](t *Table[Req, Res], j *job[Req, Res]) {
	tracePut(&j.mu, traceEvent{A: "Evict", J: j.id, O: ptr(ordinalLocked(t, j))})
}

// ordinalLocked returns the admission ordinal of j, a job of the order.
// t.mu must be held.
func ordinalLocked[Req, Res any](t *Table[Req, Res], j *job[Req, Res]) uint64 {
	return t.order.at(int(j.pos - t.order.off)).ord
}

// t.mu is held: List read the page jobs for q (normalized) and answers
// next. Each job listed is looked up by its id, in the map and then in
// the admission order, for its ordinal. No traceAtomic (the trace lock is
// taken for the append only): the page is read in a critical section of
// the table mutex, ordered against every other step that logs under it.
func traceList[Req, Res any](t *Table[Req, Res], q ListQuery, jobs []Snapshot, next uint64) {
	if !tracer.on.Load() {
		return
	}
	e := traceEvent{A: "List", B: ptr(q.Before), Nx: ptr(next), Lim: ptr(q.Limit),
		Os: make([]uint64, 0, len(jobs)), Ids: make([]string, 0, len(jobs))}
	if q.ByState {
		e.F = q.State.String()
	}
	for _, s := range jobs {
		var o uint64 // 0: no job of the map has the id listed
		if j := t.jobs.lookup(s.ID); j != nil {
			o = ordinalLocked(t, j)
		}
		e.Os, e.Ids = append(e.Os, o), append(e.Ids, s.ID)
	}
	traceLog(nil, e, false)
}

// t.mu is held: SubmitKeyed found key held by the job id (err nil: a
// replay; ErrKeyConflict), or, the key free, admission refused
// (ErrQueueFull, id "").
func traceKeyed(key, id string, err error) {
	r := errName(err)
	if err == nil {
		r = "replay"
	}
	traceLog(nil, traceEvent{A: "SubmitKeyed", J: id, K: key, R: r}, false)
}

// After traceAtomic, t.mu held: SubmitKeyed inserted the job id under key.
func traceKeyedInsert[Req, Res any](t *Table[Req, Res], id, key string) {
	traceLog(nil, insertEventLocked(t, id, key), true)
}

// After traceAtomic: the lookup that found no job.
func traceLookup(id string, missed bool) {
	if !missed {
		if tracer.on.Load() {
			tracer.mu.Unlock()
		}
		return
	}
	traceLog(nil, traceEvent{A: "Lookup", J: id, R: "ErrNotFound"}, true)
}

// j.mu is held.
func traceStart[Req, Res any](j *job[Req, Res], err error) {
	traceLog(&j.mu, traceEvent{A: "Start", J: j.id, R: errName(err), St: j.loadState().String()}, false)
}

// j.mu is held.
func traceTake[Req, Res any](j *job[Req, Res], err error) {
	traceLog(&j.mu, traceEvent{A: "TakeRequest", J: j.id, R: errName(err)}, false)
}

// j.mu is held: the terminal call's check, which refused it (ok false:
// the job is terminal already) or accepted it. An accepted call is the
// spec's TerminateWrite, logged in the critical section that checks and
// then writes the payload; its TerminateRelease is logged apart, where
// the state is stored (traceTerminated), so that the checker compares
// the two sections.
func traceEndCheck[Req, Res any](j *job[Req, Res], to State, ok bool) {
	e := traceEvent{A: endAction(to), J: j.id, R: "ok"}
	if !ok {
		e.R, e.St = "ErrTerminal", j.loadState().String()
	}
	traceLog(&j.mu, e, false)
}

// After traceAtomic, j.mu and the table mutex held: the terminal state
// stored and depth.Add(-1) returned d, the spec's TerminateRelease,
// logged with the sections it ran in: the same as its call's check if Go
// kept both mutexes from the check to here.
func traceTerminated[Req, Res any](j *job[Req, Res], d int32) {
	traceLog(&j.mu, traceEvent{A: "TerminateRelease", J: j.id, St: j.loadState().String(), D: ptr(d)}, true)
}

// j.mu is held: done is about to be closed. Logged with the state Go
// holds there, which the spec's TerminateRelease, the step that closes
// done, has already made terminal; nothing else changes, so the checker
// takes it as a step that changes nothing.
func traceWake[Req, Res any](j *job[Req, Res]) {
	traceLog(&j.mu, traceEvent{A: "Wake", J: j.id, St: j.loadState().String()}, false)
}

// The state Wait's check read: a terminal one read without the lock
// (nothing changes a terminal job again, so it is logged once the read is
// done), or any state read under j.mu (register).
func traceWaitCheck[Req, Res any](j *job[Req, Res], s State) {
	traceLog(&j.mu, traceEvent{A: "WaitCheck", J: j.id, St: s.String()}, false)
}

// j.mu is held: the check saw a live state, and the waiter takes done.
func traceWaitRegister[Req, Res any](j *job[Req, Res]) {
	traceLog(&j.mu, traceEvent{A: "WaitRegister", J: j.id}, false)
}

// Woken by the close of done, Wait returns the final snapshot, read
// without the lock as Wait reads it.
func traceWaitWoken[Req, Res any](j *job[Req, Res]) {
	s := j.loadState()
	traceLog(&j.mu, traceEvent{A: "WaitBlock", J: j.id}, false,
		traceEvent{A: "WaitReturn", J: j.id, St: s.String()})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Wait's context ended before its wakeup (the select took ctx.Done): a
// step of the waiter alone. The snapshot it reads next is logged by
// traceSnapshot, as the waiter's WaitReturn.
func traceWaitCancel[Req, Res any](j *job[Req, Res]) {
	traceLog(&j.mu, traceEvent{A: "WaitCancel", J: j.id}, false)
}

// A snapshot read (Snapshot, or Wait once its context ended): terminal,
// read without the lock and logged after (nothing changes a terminal job
// again), or copied under j.mu.
func traceSnapshot[Req, Res any](j *job[Req, Res], s Snapshot) {
	traceLog(&j.mu, traceEvent{A: "Snapshot", J: j.id, St: s.State.String(),
		E: yesNo(s.Err != nil), C: yesNo(!s.CompletedAt.IsZero())}, false)
}

// Result's read: as traceSnapshot.
func traceResult[Req, Res any](j *job[Req, Res], s Snapshot) {
	traceLog(&j.mu, traceEvent{A: "Result", J: j.id, St: s.State.String(),
		E: yesNo(s.Err != nil), C: yesNo(!s.CompletedAt.IsZero())}, false)
}

// writeTrace encodes events as ndjson.
func writeTrace(events []traceEvent) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
