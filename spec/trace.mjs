// Trace validation: checks that logs of the Go table (ndjson, one spec
// action a line, written by jobtable's TestTraceRuns under the tag
// jobtable_trace) are behaviours of JobTable.tla; a keyed run's, of
// IdempotencyKeys.tla too (below), and a run that lists, of Listing.tla
// too (trace-listing.mjs).
//
//   node spec/trace.mjs [--jobs N] [--quiet] [--stop] FILE|DIR ...
//   node spec/trace.mjs --bite FILE|DIR ...
//
// --stop ends at the first rejected trace (the mutant gate needs one).
//
// For each trace it generates one self-contained module, JobTable.tla with
// the trace index ti spliced into its variables and a TraceNext that
// follows each logged event with the matching spec action and its observed
// values, and a cfg whose constants (jobs, threads of each role) come from
// the trace and whose constant Trace is the trace itself. tla-checker
// explores it with deadlock allowed: the invariant "ti < Len(Trace)" is
// violated exactly when the whole trace was consumed (accepted); a search
// that ends without it means no behaviour of the spec produces the trace
// (rejected), and a bisection over prefixes finds the first event it
// cannot follow. A parse or evaluation error, an unknown thread or action,
// or a bound reached is an error, never a verdict. Each event names the
// critical sections Go logged it in, and the module checks them beside the
// spec's mutexes (jobOwner, tableOwner; IdempotencyKeys' owner), by a fixed
// classification of the actions (JobSteps, JobReads, JobHeld) that must be
// kept in step with the specs by hand: a step the spec makes atomic must
// not span two sections, and a step it takes under a mutex must be in one.
//
// Exit status: 0 every trace accepted, 1 otherwise, 2 on an error.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { listingRecords, listingModule, listingCfg } from './trace-listing.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// Thread roles by the letter of their name, as the spec's constants.
// A keyed submitter (k) is a submitter of JobTable.tla; each of its calls
// is a submitter of IdempotencyKeys.tla. A lister (l) is no thread of
// JobTable.tla: it logs only List, the pages that Listing.tla follows
// (trace-listing.mjs).
const ROLES = { s: 'Submitters', k: 'Submitters', r: 'Runners', t: 'Timers', p: 'Pollers', w: 'Waiters',
  m: 'Misusers' };
// The actions a trace may log. MisuseSkip is the harness's note of a
// misuser that leaves TakeRequest out (a step of the spec's misuser);
// WaitTimeout and Panic are its notes of a wait that never returned and of
// a call that panicked, which no action of the spec matches.
const ACTIONS = new Set(['SubmitLoad', 'SubmitCAS', 'SubmitInsert', 'Lookup', 'Start', 'TakeRequest',
  'Finish', 'Fail', 'Timeout', 'TerminateRelease', 'WaitCheck', 'WaitRegister', 'WaitBlock',
  'WaitReturn', 'WaitCancel', 'Wake', 'Snapshot', 'Result', 'SubmitKeyed', 'Evict', 'MisuseSkip',
  'WaitTimeout', 'Panic', 'List']);
// The one id every attempt refused with ErrQueueFull claims (see
// parseTrace).
const REFUSED = 'x0';
export const UNKNOWN = -1000; // an integer field Go did not log
export const NO_SECTION = 0; // a critical section its thread did not hold

export class TraceError extends Error {}

// parseTrace reads a log: its header (the table's configuration) and its
// events, with Go's random ids renamed j1, j2 ... in order of appearance.
// Go learns a job's id only after admission, so each submitter's
// SubmitLoad and SubmitCAS events are given the id of the insertion that
// ends the attempt; an attempt refused with ErrQueueFull is given x0, and
// one cut off by the end of the trace a fresh name (x1, x2 ...): the spec
// claims an id for each all the same. Refused attempts all claim x0 (the
// trace module lets x0 be claimed again): the claim of an id that never
// reaches the map changes nothing else, and one id per refusal would make
// every state of a long trace larger.
//
// A header with sections true says that Go logged, on each event, the
// critical section of its job's mutex (js) and of the table mutex (ts)
// that the event was logged in, leaving a field out where its thread held
// no section: such a field reads NoSection (0). Without it both are
// Unknown, and the module checks no section.
export function parseTrace(text) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new TraceError('empty trace');
  const head = JSON.parse(lines[0]);
  if (!head.config) throw new TraceError('first line is no header with the config');
  const events = lines.slice(1).map((l, k) => {
    let e;
    try { e = JSON.parse(l); } catch (err) { throw new TraceError(`event ${k + 1}: ${err.message}`); }
    if (!ACTIONS.has(e.a)) throw new TraceError(`event ${k + 1}: unknown action ${JSON.stringify(e.a)}`);
    if (typeof e.t !== 'string' || !/^([srtpwml][0-9]+|k[0-9]+\.[0-9]+)$/.test(e.t)) {
      throw new TraceError(`event ${k + 1}: unknown thread ${JSON.stringify(e.t)}`);
    }
    // A lister only lists, but for the harness's note of a call that
    // panicked, which no spec action follows (a rejection, not an error).
    if ((e.a === 'List' && e.t[0] !== 'l') || (e.t[0] === 'l' && e.a !== 'List' && e.a !== 'Panic')) {
      throw new TraceError(`event ${k + 1}: ${e.a} by ${e.t}: only a lister (l) lists, and it only lists`);
    }
    // A keyed call kS.N: thread kS of JobTable.tla, kS.N of
    // IdempotencyKeys.tla.
    const sec = (v) => (head.sections === true ? (v ?? NO_SECTION) : UNKNOWN);
    const es = { ...e, js: sec(e.js), ts: sec(e.ts) };
    if (e.t[0] === 'k') return { ...es, t: e.t.split('.')[0], call: e.t };
    return es;
  });
  const names = new Map();
  const nameOf = (id) => {
    if (!names.has(id)) names.set(id, `j${names.size + 1}`);
    return names.get(id);
  };
  let phantoms = 0;
  let refused = false;
  const open = new Map(); // thread -> events of its admission attempt
  const close = (t, name) => {
    for (const e of open.get(t) ?? []) e.j = name;
    open.delete(t);
  };
  const out = events.map((e) => ({ ...e }));
  for (const e of out) {
    if (e.a === 'SubmitLoad' || e.a === 'SubmitCAS') {
      if (!open.has(e.t)) open.set(e.t, []);
      open.get(e.t).push(e);
      if (e.a === 'SubmitLoad' && e.d >= head.config.MaxQueue) {
        close(e.t, REFUSED);
        refused = true;
      }
    } else if (e.a === 'SubmitInsert') {
      e.j = nameOf(e.j);
      close(e.t, e.j);
    } else if (e.j !== undefined) {
      e.j = nameOf(e.j);
    } else if (e.a === 'List') {
      // A page lists admitted jobs; an id never admitted keeps its own
      // name, which no job has.
      e.ids = (e.ids ?? []).map((id) => names.get(id) ?? `?${id}`);
    }
  }
  for (const t of [...open.keys()]) close(t, `x${++phantoms}`);
  const jobs = [...names.values()];
  if (refused) jobs.push(REFUSED);
  for (let k = 1; k <= phantoms; k++) jobs.push(`x${k}`);
  return { config: head.config, keyed: head.keyed === true, events: out, jobs };
}

const str = (s) => JSON.stringify(s);
const set = (xs) => `{${xs.map(str).join(', ')}}`;

// int is v if Go logged an integer there, else UNKNOWN.
export const int = (v) => (Number.isInteger(v) ? v : UNKNOWN);

// tlaValue writes a record of Trace (an object), a sequence (an array), a
// string or an integer as a TLA+ expression.
export function tlaValue(v) {
  if (Array.isArray(v)) return `<<${v.map(tlaValue).join(', ')}>>`;
  if (typeof v === 'object') return `[${Object.entries(v).map(([k, x]) => `${k} |-> ${tlaValue(x)}`).join(', ')}]`;
  if (typeof v === 'string') return str(v);
  if (Number.isInteger(v)) return String(v);
  throw new TraceError(`no TLA+ value for ${str(v)}`);
}

// The record of one event: every field present, so that every record of
// Trace has the same domain.
export function traceRecord(e) {
  return { a: e.a, t: e.t, j: e.j ?? 'nojob', r: e.r ?? '', st: e.st ?? '', d: int(e.d), n: int(e.n),
    l: int(e.l), e: e.e ?? '', c: e.c ?? '', js: int(e.js), ts: int(e.ts) };
}

// What the trace module adds to JobTable.tla.
const TRACE_DEFS = String.raw`
-----------------------------------------------------------------------------
(* Trace validation, generated by spec/trace.mjs: each step follows the    *)
(* next logged event with the action it names, for the thread it names,    *)
(* and checks the values Go observed there.                                *)

Unknown == ${UNKNOWN}
NoSection == ${NO_SECTION}

TraceInit ==
    /\ Init
    /\ ti = 0
    /\ jsec = [j \in Jobs |-> NoSection]
    /\ tsec = NoSection

\* Go's answer r to call c on job j is the spec's, or j was evicted after
\* Go's lock-free lookup found it: the call is linearised at the lookup
\* (see Table in jobtable/table.go), where the job was terminal.
Answer(c, j, r) ==
    \/ Contract(c, j) = r
    \/ (j \in evicted /\ r \in {"ErrNotPending", "ErrTerminal"})

\* A terminal call whose lookup found no job: Go answers ErrNotFound from
\* its lock-free lookup, where the spec's TerminateWrite looks the id up
\* holding the table mutex. A lookup that finds nothing changes nothing,
\* so while another thread holds the table mutex (between its
\* TerminateWrite and its TerminateRelease, or in an admission or a page)
\* the call is followed as TerminateWrite's refusal, without the mutex.
EndNotFound(t, j) ==
    /\ ~TableFree
    /\ \/ pc[t] = "Terminate" /\ tjob[t] = j
       \/ pc[t] = "Timeout"
    /\ callsOK' = (callsOK /\ Contract("End", j) = "ErrNotFound")
    /\ pc' = [pc EXCEPT ![t] = AfterTerminate(t)]
    /\ tjob' = [tjob EXCEPT ![t] = NoJob]
    /\ tnow' = [tnow EXCEPT ![t] = 0]
    /\ UNCHANGED <<depth, tableOwner, table, lru, queue, jobOwner, state, req,
                   res, err, createdAt, startedAt, completedAt, done, now,
                   dval, tfinal, view, claimed, admitted, decs, outcome,
                   runFrom, takes, refusals, expired, evicted, sweepOK,
                   tlive>>

\* Any step of thread t in its role.
ThreadNext(t) ==
    \/ (t \in Runners /\ Runner(t))
    \/ (t \in (Runners \cup Timers) /\ Terminator(t))
    \/ (t \in Misusers /\ Misuser(t))
    \/ (t \in Pollers /\ Poller(t))
    \/ (t \in Waiters /\ Waiter(t))

\* The view a reader returned is the snapshot Go read: its state, whether
\* its error and its completion time are set (Result's view of a DONE job
\* carries neither flag: Go's snapshot has a completion time there).
ReadAs(v, e) ==
    /\ v.st = e.st
    /\ (v.kind \in {"snapshot", "deadline"}) =>
          (/\ v.err = (e.e = "yes")
           /\ v.at = (e.c = "yes"))

EndCall(e) ==
    IF e.a = "Finish" THEN Finish(e.t)
    ELSE IF e.a = "Fail" THEN Fail(e.t)
    ELSE Timeout(e.t)

Step(e) ==
    CASE e.a = "SubmitLoad" ->
            /\ SubmitLoad(e.t)
            /\ depth = e.d
            /\ e.j \in claimed'
            /\ (claimed' \ claimed) \subseteq {e.j}
      [] e.a = "SubmitCAS" ->
            /\ SubmitCAS(e.t)
            /\ tjob[e.t] = e.j
            /\ (e.r = "ok") = (pc'[e.t] = "SubmitInsert")
            /\ ((e.r = "ok") => (depth' = e.d))
      [] e.a = "SubmitInsert" ->
            /\ SubmitInsert(e.t)
            /\ tjob[e.t] = e.j
            /\ Cardinality(table') = e.n
            /\ Len(lru') = e.l
      [] e.a = "Lookup" ->
            /\ e.j \notin table
            /\ ThreadNext(e.t) \/ EndNotFound(e.t, e.j)
            /\ tjob'[e.t] \in {e.j, NoJob}
            /\ queue' \in {queue, queue \ {e.j}}
            /\ pc'[e.t] # "Done" \/ e.t \notin Runners
      [] e.a = "Start" /\ e.t \in Misusers ->
            /\ Answer("Start", e.j, e.r)
            /\ MisuseStart(e.t)
            /\ tjob'[e.t] = e.j
            \* the call was made: not MisuseStart's skip, which would
            \* differ from a refusal only in the witness refusals
            /\ ((e.r = "ErrNotPending" /\ e.j \in table /\ state[e.j] = "RUNNING")
                  => "StartRunning" \in refusals')
            /\ ((e.r = "ok") => (state'[e.j] = "RUNNING"))
            /\ ((e.r # "ok") => (e.j \in evicted \/ state[e.j] = e.st))
      [] e.a = "Start" /\ e.t \notin Misusers ->
            /\ e.j \in queue
            /\ Answer("Start", e.j, e.r)
            /\ Start(e.t)
            /\ queue' = queue \ {e.j}
            /\ ((e.r = "ok") => (state'[e.j] = "RUNNING"))
            /\ ((e.r # "ok") => (e.j \in evicted \/ state[e.j] = e.st))
      [] e.a = "TakeRequest" ->
            /\ tjob[e.t] = e.j
            /\ Answer("TakeRequest", e.j, e.r)
            /\ IF e.t \in Misusers
                  THEN /\ MisuseTake(e.t)
                       /\ (takes'[e.j] = takes[e.j] + 1) = (e.r = "ok")
                       \* the call was made (as for Start)
                       /\ ((e.r = "ErrTerminal" /\ e.j \in table) => "TakeTerminal" \in refusals')
                       /\ ((e.r = "ErrRequestTaken") => "TakeTaken" \in refusals')
                  ELSE TakeRequest(e.t)
      [] e.a = "MisuseSkip" ->
            /\ tjob[e.t] = e.j
            /\ MisuseTake(e.t)
            /\ UNCHANGED <<takes, refusals, callsOK>>
      [] e.a \in {"Finish", "Fail", "Timeout"} ->
            /\ ((e.t \in Runners \cup Misusers) => (tjob[e.t] = e.j))
            /\ Answer("End", e.j, e.r)
            /\ ((e.r # "ok") => (e.j \in evicted \/ state[e.j] = e.st))
            /\ EndCall(e)
            /\ (e.r = "ok") = (pc'[e.t] = "TerminateRelease")
            /\ ((e.r = "ok") => (tjob'[e.t] = e.j))
      [] e.a = "TerminateRelease" ->
            /\ tjob[e.t] = e.j
            /\ TerminateRelease(e.t)
            /\ depth' = e.d
            /\ state'[e.j] = e.st
      [] e.a = "WaitCheck" ->
            /\ WaitCheck(e.t)
            /\ tjob'[e.t] = e.j
            /\ IF e.st \in Terminal
                  THEN /\ pc'[e.t] = "Done"
                       /\ (e.j \in evicted \/ view'[e.t].st = e.st)
                  ELSE /\ pc'[e.t] = "WaitRegister"
                       /\ state[e.j] = e.st
      [] e.a = "WaitRegister" ->
            /\ tjob[e.t] = e.j
            /\ WaitRegister(e.t)
      [] e.a = "WaitBlock" ->
            /\ tjob[e.t] = e.j
            /\ WaitBlock(e.t)
      [] e.a = "WaitReturn" ->
            /\ tjob[e.t] = e.j
            /\ WaitReturn(e.t)
            /\ view'[e.t].st = e.st
      \* The close of done, logged apart from TerminateRelease, the step
      \* that closes it in the spec, with the state Go held there: a step
      \* that changes nothing and checks that the close follows it.
      [] e.a = "Wake" ->
            /\ e.st \in Terminal
            /\ state[e.j] = e.st
            /\ done[e.j] = "closed"
            /\ UNCHANGED vars
      \* A keyed submit that found its key held (a replay, or a conflict)
      \* by a job of the map, or was refused admission: no step of
      \* JobTable.tla (IdempotencyKeys.tla follows it).
      [] e.a = "SubmitKeyed" ->
            /\ (e.r \in {"replay", "ErrKeyConflict"}) => e.j \in table
            /\ UNCHANGED vars
      \* Retention evicts a job of the list, in the SubmitInsert that
      \* follows (EvictLocked): a step that changes nothing here.
      [] e.a = "Evict" ->
            /\ e.j \in Range(lru)
            /\ UNCHANGED vars
      \* A page of the listing: no step of JobTable.tla (Listing.tla
      \* follows it, see trace-listing.mjs).
      [] e.a = "List" ->
            UNCHANGED vars
      [] e.a = "WaitCancel" ->
            /\ tjob[e.t] = e.j
            /\ WaitCancel(e.t)
      \* Wait, once its context ended, returns the snapshot it reads.
      [] e.a = "Snapshot" /\ e.t \in Waiters ->
            /\ tjob[e.t] = e.j
            /\ pc[e.t] = "WaitExpired"
            /\ WaitReturn(e.t)
            /\ ReadAs(view'[e.t], e)
      [] e.a = "Snapshot" /\ e.t \notin Waiters ->
            /\ Snapshot(e.t)
            /\ tjob'[e.t] = e.j
            /\ (e.j \in evicted \/ ReadAs(view'[e.t], e))
      [] e.a = "Result" ->
            /\ tjob[e.t] = e.j
            /\ Result(e.t)
            /\ (e.j \in evicted \/ ReadAs(view'[e.t], e))
      [] OTHER -> FALSE

\* Critical sections.  Go numbers the critical sections of each mutex in
\* the order they are entered, and logs on each event the section of its
\* job's mutex (js) and of the table mutex (ts) that its thread was in
\* (NoSection: none; Unknown: not logged).  jsec[j] and tsec are the
\* latest sections of the spec's jobOwner[j] and tableOwner that the trace
\* has followed a step in.  A step the spec takes as one critical section
\* of a mutex, or in which it takes a mutex that it holds across steps,
\* must be in a later section than that; a step the spec takes still
\* holding the mutex, in the same section.  So a step the spec makes
\* atomic that Go splits over two sections (WaitCheck, then WaitRegister
\* in a section of their own), or a step the spec takes under the job
\* mutex that Go takes without it (a live job's snapshot), is refused
\* whatever else ran in between.
Opens(sec, last) == sec = Unknown \/ (sec # NoSection /\ sec > last)
Keeps(sec, last) == sec = Unknown \/ sec = last
After(sec, last) == IF sec = Unknown THEN last ELSE sec

\* Under the job mutex: each its own critical section (a terminal call
\* that succeeds, logged at its check, keeps it, and the table mutex, for
\* TerminateRelease, which Go logs apart, at the state store).
JobSteps == {"Start", "TakeRequest", "Finish", "Fail", "Timeout"}
\* Reads under the job mutex, but for a terminal state, which the spec and
\* Go (job.final) read without it.
JobReads == {"WaitCheck", "Snapshot", "Result"}
\* Still in the section of the thread's step before (TerminateWrite's, or
\* WaitCheck's); Wake is TerminateRelease's close of done.
JobHeld == {"TerminateRelease", "Wake", "WaitRegister"}

Sections(e) ==
    /\ IF e.j \in Jobs /\
          (e.a \in JobSteps \/ (e.a \in JobReads /\ (e.js # NoSection \/ e.st \notin Terminal)))
          THEN /\ Opens(e.js, jsec[e.j])
               /\ jsec' = [jsec EXCEPT ![e.j] = After(e.js, jsec[e.j])]
       ELSE /\ (e.a \in JobHeld => Keeps(e.js, jsec[e.j]))
            /\ jsec' = jsec
    \* Submit's insertion and the terminal call take the table mutex;
    \* retention evicts in the insertion's section, logged before it.
    /\ CASE e.a \in {"SubmitInsert", "Finish", "Fail", "Timeout"} ->
              Opens(e.ts, tsec) /\ tsec' = After(e.ts, tsec)
        [] e.a = "Evict" -> Opens(e.ts, tsec) /\ tsec' = tsec
        [] e.a \in {"TerminateRelease", "Wake"} -> Keeps(e.ts, tsec) /\ tsec' = tsec
        [] OTHER -> tsec' = tsec

TraceNext ==
    /\ ti < Len(Trace)
    /\ \E e \in {Trace[ti + 1]} : Step(e) /\ Sections(e)
    /\ ti' = ti + 1

\* Violated exactly when the whole trace has been followed: acceptance.
TraceNotConsumed == ti < Len(Trace)
`;

// traceModule turns JobTable.tla into JobTableTrace: one module (the
// checker reads no EXTENDS of user modules), with the constant Trace, the
// variable ti, and ids chosen by the trace rather than in a fixed order.
export function traceModule(spec) {
  const edits = [
    [/^-+ MODULE JobTable -+$/m, (m) => m.replace('JobTable', 'JobTableTrace')],
    // the last constant, then Trace
    [/^(\s*)Defect(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}Defect,${ws}Trace`],
    // the last variable, then the index of the trace and the latest
    // sections of the job mutexes and of the table mutex
    [/^(\s*)callsOK(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}callsOK,${ws}ti,${ws}jsec,${ws}tsec`],
    // NextId hands ids out in a fixed order to stand in for symmetry; a
    // trace names its own, so any unclaimed id may come next (ids are
    // interchangeable: spec/README.md, Reductions).
    [/ELSE IF claimed = Jobs THEN \{\}\s*ELSE \{CHOOSE j \\in c \\ claimed : TRUE : c \\in [^\n]*\}/,
      () => `ELSE ((Jobs \\ claimed) \\cup {${str(REFUSED)}}) \\cap TraceJob`],
    // Every choice of a job is narrowed to the job the next event names:
    // Step requires that job of each of these actions anyway (or, for a
    // timer's refused call, checks the answer on it), so no behaviour that
    // follows the trace is lost; the checker only stops computing a
    // successor per job of the trace, which made each step cost O(jobs).
    [/^Init ==/m, () => 'TraceJob == IF ti < Len(Trace) THEN {Trace[ti + 1].j} \\cap Jobs ELSE Jobs\n\nInit =='],
    [/\\E j \\in Jobs :/g, () => '\\E j \\in Jobs \\cap TraceJob :'],
    [/\\E j \\in queue :/, () => '\\E j \\in queue \\cap TraceJob :'],
    // A misuser picks a job of the map, at its Start's lock-free lookup;
    // the spec merges that lookup into the critical section after it, so
    // the job it logs may have been evicted in between (as for Answer).
    [/\\E j \\in table :/, () => '\\E j \\in (table \\cup evicted) \\cap TraceJob :'],
    [/THEN Jobs ELSE \{tjob\[t\]\}/, () => 'THEN Jobs \\cap TraceJob ELSE {tjob[t]}'],
    [/\n=+\s*$/, () => `\n${TRACE_DEFS}\n${'='.repeat(77)}\n`],
  ];
  return applyEdits(spec, 'JobTable.tla', edits);
}

// applyEdits applies edits, [pattern, replacement] pairs, to text in
// order; a pattern that no longer matches (what names the text) is an
// error, never a silent skip.
export function applyEdits(text, what, edits) {
  let out = text;
  for (const [re, fn] of edits) {
    if (!re.test(out)) throw new TraceError(`${what} no longer matches ${re}`);
    out = out.replace(re, fn);
  }
  return out;
}

// traceCfg: constants from the trace, the trace as the constant Trace.
export function traceCfg(t, upTo = t.events.length) {
  const threads = {};
  for (const role of Object.values(ROLES)) threads[role] = new Set();
  for (const e of t.events) if (ROLES[e.t[0]]) threads[ROLES[e.t[0]]].add(e.t);
  const lines = [
    'CONSTANTS',
    `    Jobs = ${set(t.jobs)}`,
    ...[...new Set(Object.values(ROLES))].map((r) => `    ${r} = ${set([...threads[r]])}`),
    `    MaxQueue = ${t.config.MaxQueue}`,
    `    MaxCompleted = ${t.config.MaxCompleted}`,
    '    TTL = 1',
    '    MaxTime = 0',
    '    RunnerOutcomes = {"DONE", "FAILED", "TIMEOUT"}',
    '    WaitDeadline = TRUE',
    // Go logs no tenant: every job is of one tenant, with no bound.
    '    Shares = {}',
    '    TenantMax = 0',
    '    Defect = "none"',
    `    Trace = <<${t.events.slice(0, upTo).map((e) => tlaValue(traceRecord(e))).join(',\n        ')}>>`,
    'INIT TraceInit',
    'NEXT TraceNext',
    'INVARIANT TraceNotConsumed',
  ];
  return lines.join('\n') + '\n';
}

// Keyed runs are followed by IdempotencyKeys.tla too. Its SubmitKeyed is
// three steps under the table mutex (SubmitLock, SubmitCheck,
// SubmitInsert), Go's one critical section, logged as one event: each is
// expanded into the spec's steps, where Go performed the critical section.
// A refusal by a full queue is placed at the SubmitLoad that saw the full
// depth, with the key of the call's SubmitKeyed event; an admission at its
// SubmitInsert, after the evictions of the same critical section (the
// spec evicts only with the mutex free; Go evicts only after the key was
// found free, so the order changes no answer). TerminateRelease is End,
// with the depth Go's decrement returned. Every other event is no step of
// this module.
//
// Each of the three steps carries, as s, the table mutex's section (ts) of
// the event where Go performed it: the lock, the first event the call
// logged under it (its first SubmitLoad; a replay's or a conflict's
// SubmitKeyed); the check, the event that decided it (the SubmitKeyed of
// a replay, a conflict or a refusal; the successful SubmitCAS of an
// admission, the spec's check taking the slot); the insertion, its
// SubmitInsert. The module requires the three to share the section in
// which the spec's owner took the mutex.
export function ikRecords(t) {
  const recs = [];
  const ev = t.events;
  const firstLoad = new Map(); // keyed call -> its first SubmitLoad
  const admitted = new Map(); // keyed call -> its successful SubmitCAS
  const sec = (e) => e?.ts ?? UNKNOWN;
  ev.forEach((e, x) => {
    const keyed = e.t[0] === 'k';
    if (keyed && e.a === 'SubmitLoad' && !firstLoad.has(e.call)) firstLoad.set(e.call, e);
    if (keyed && e.a === 'SubmitCAS' && e.r === 'ok') admitted.set(e.call, e);
    if (keyed && e.a === 'SubmitLoad' && e.d >= t.config.MaxQueue) {
      const f = ev.slice(x + 1).find((g) => g.call === e.call && g.a === 'SubmitKeyed');
      if (f === undefined) return; // cut off by the end of the trace
      recs.push({ a: 'Lock', t: e.call, k: f.k, s: sec(firstLoad.get(e.call)), at: x },
        { a: 'Check', t: e.call, r: 'full', s: sec(f), at: x });
    } else if (keyed && e.a === 'SubmitKeyed' && e.r !== 'ErrQueueFull') {
      recs.push({ a: 'Lock', t: e.call, k: e.k, s: sec(e), at: x },
        { a: 'Check', t: e.call, r: 'replay', j: e.j, s: sec(e), at: x });
    } else if (keyed && e.a === 'SubmitInsert') {
      recs.push({ a: 'Lock', t: e.call, k: e.k, s: sec(firstLoad.get(e.call)), at: x },
        { a: 'Check', t: e.call, r: 'admit', s: sec(admitted.get(e.call)), at: x },
        { a: 'Insert', t: e.call, j: e.j, s: sec(e), at: x });
    } else if (e.a === 'TerminateRelease') {
      recs.push({ a: 'End', t: e.t, j: e.j, d: e.d, at: x });
    } else if (e.a === 'Evict') {
      recs.push({ a: 'Evict', t: e.t, j: e.j, at: x });
    }
  });
  return recs;
}

const IK_DEFS = String.raw`
-----------------------------------------------------------------------------
(* Trace validation, generated by spec/trace.mjs: each step follows the    *)
(* next record of a keyed run (see ikRecords) with the action it names.    *)

Unknown == ${UNKNOWN}
NoSection == ${NO_SECTION}

TraceInit == Init /\ ti = 0 /\ osec = NoSection

\* osec: the table mutex's section in which owner took it, as Go logged
\* it (s; Unknown: not logged). SubmitLock takes the mutex in a section
\* after the last one; SubmitCheck and SubmitInsert hold it: the same
\* section. A check answered outside the mutex (NoSection), or an
\* insertion in a section of its own, is refused.
Step(e) ==
    CASE e.a = "Lock" ->
            /\ SubmitLock(e.t)
            /\ tkey'[e.t] = e.k
            /\ (e.s = Unknown \/ (e.s # NoSection /\ e.s > osec))
            /\ osec' = IF e.s = Unknown THEN osec ELSE e.s
      [] e.a = "Check" ->
            /\ SubmitCheck(e.t)
            /\ CASE e.r = "replay" -> index[tkey[e.t]] = e.j
                 [] e.r = "full" -> index[tkey[e.t]] = NoJob /\ depth >= MaxQueue
                 [] OTHER -> index[tkey[e.t]] = NoJob /\ depth < MaxQueue
            /\ (e.s = Unknown \/ e.s = osec)
            /\ UNCHANGED osec
      [] e.a = "Insert" ->
            /\ SubmitInsert(e.t)
            /\ answer'[e.t] = e.j
            /\ (e.s = Unknown \/ e.s = osec)
            /\ UNCHANGED osec
      [] e.a = "End" ->
            /\ End(e.j)
            /\ depth' = e.d
            /\ UNCHANGED osec
      [] e.a = "Evict" ->
            Evict(e.j) /\ UNCHANGED osec
      [] OTHER -> FALSE

TraceNext ==
    /\ ti < Len(Trace)
    /\ \E e \in {Trace[ti + 1]} : Step(e)
    /\ ti' = ti + 1

TraceNotConsumed == ti < Len(Trace)
`;

export function ikModule(spec) {
  const edits = [
    [/^-+ MODULE IdempotencyKeys -+$/m, (m) => m.replace('IdempotencyKeys', 'IdempotencyKeysTrace')],
    [/^EXTENDS Naturals, FiniteSets$/m, () => 'EXTENDS Integers, FiniteSets, Sequences'],
    [/^(\s*)Defect(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}Defect,${ws}Trace`],
    [/^(\s*)answer(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}answer,${ws}ti,${ws}osec`],
    [/\n=+\s*$/, () => `\n${IK_DEFS}\n${'='.repeat(77)}\n`],
  ];
  return applyEdits(spec, 'IdempotencyKeys.tla', edits);
}

// The record of one of ikRecords' records, every field present.
export function ikRecord(r) {
  return { a: r.a, t: r.t, j: r.j ?? 'nojob', k: r.k ?? 'nokey', r: r.r ?? '', d: int(r.d), s: int(r.s) };
}

export function ikCfg(t, recs, upTo = recs.length) {
  const field = (name) => [...new Set(recs.filter((r) => r[name] !== undefined).map((r) => r[name]))];
  return [
    'CONSTANTS',
    `    Submitters = ${set(field('t').filter((x) => x[0] === 'k'))}`,
    `    Keys = ${set(field('k'))}`,
    `    Ids = ${set(recs.filter((r) => r.a === 'Insert').map((r) => r.j))}`,
    `    MaxQueue = ${t.config.MaxQueue}`,
    '    Defect = "none"',
    `    Trace = <<${recs.slice(0, upTo).map((r) => tlaValue(ikRecord(r))).join(',\n        ')}>>`,
    'INIT TraceInit',
    'NEXT TraceNext',
    'INVARIANT TraceNotConsumed',
  ].join('\n') + '\n';
}

let checker;
async function check(module, cfg, maxDepth) {
  checker ??= await import('./tlachecker.mjs');
  const r = checker.tlaCheck(module, cfg, { allowDeadlock: true, maxDepth });
  if (r.outcome === 'violates TraceNotConsumed') return { accepted: true, ...r };
  if (r.outcome === 'pass') return { accepted: false, ...r };
  throw new TraceError(`no verdict: ${r.outcome}`);
}

// checkEvents checks events against module, cfgOf(k) being the config of
// the first k events and depth(k) the steps they may take. It returns
// { accepted, events, states, secs, at?, event? }: at is the 1-based index
// of the first event the spec cannot follow (the longest accepted prefix,
// since prefixes of an accepted trace are accepted).
export async function checkEvents(module, events, cfgOf, depth) {
  const t0 = Date.now();
  const n = events.length;
  const r = await check(module, cfgOf(n), depth(n));
  const res = { accepted: r.accepted, events: n, states: r.states, secs: (Date.now() - t0) / 1000 };
  if (!r.accepted) {
    let lo = 0, hi = n; // prefix lo accepted, prefix hi rejected
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if ((await check(module, cfgOf(mid), depth(mid))).accepted) lo = mid; else hi = mid;
    }
    res.at = hi;
    res.event = events[hi - 1];
  }
  return res;
}

// readTraceFiles reads each ndjson trace of files: its header line and
// its events.
export function readTraceFiles(files) {
  return files.map((f) => {
    const lines = readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '');
    return { file: f, head: lines[0], events: lines.slice(1).map((l) => JSON.parse(l)) };
  });
}

// checkTrace returns { accepted, events, secs, at? }: at is the 1-based
// index of the first event the spec cannot follow.
export async function checkTrace(text, spec = readFileSync(join(here, 'JobTable.tla'), 'utf8')) {
  const t = parseTrace(text);
  const listing = listingRecords(t); // a malformed page is an error before any verdict
  const res = await checkJobTable(t, spec);
  if (!res.accepted) return res;
  if (!t.keyed) return checkListing(t, res, listing);
  // A keyed run: IdempotencyKeys.tla must follow it too.
  const recs = ikRecords(t);
  const module = ikModule(readFileSync(join(here, 'IdempotencyKeys.tla'), 'utf8'));
  await follow(t, res, 'IdempotencyKeys', module, (upTo) => ikCfg(t, recs, upTo), recs);
  return res.accepted ? checkListing(t, res, listing) : res;
}

// A run that lists: Listing.tla must follow it too.
async function checkListing(t, res, { recs, limit }) {
  if (limit === undefined) return res;
  const module = listingModule(readFileSync(join(here, 'Listing.tla'), 'utf8'));
  await follow(t, res, 'Listing', module, (upTo) => listingCfg(recs, limit, upTo), recs);
  return res;
}

// follow checks the records recs of trace t (each with the index at of
// the event it follows) against a second module, cfgUpTo(n) giving the
// cfg of the first n records (all of them when n is undefined), and adds
// the cost to res; on a rejection it marks res rejected at the first event
// the module cannot follow (a bisection over prefixes: prefixes of an
// accepted one are accepted).
async function follow(t, res, name, module, cfgUpTo, recs) {
  const t0 = Date.now();
  const r = await check(module, cfgUpTo(undefined), recs.length + 10);
  res.secs += (Date.now() - t0) / 1000;
  res.states += r.states;
  if (r.accepted) return;
  let lo = 0, hi = recs.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((await check(module, cfgUpTo(mid), mid + 10)).accepted) lo = mid; else hi = mid;
  }
  res.accepted = false;
  res.at = recs[hi - 1].at + 1;
  res.event = t.events[res.at - 1];
  res.module = name;
}

function checkJobTable(t, spec) {
  return checkEvents(traceModule(spec), t.events, (k) => traceCfg(t, k), (k) => k + 10);
}

// bite shows that the check bites: each edit of one event of an accepted
// trace (the first of files that has such an event) must be rejected at
// exactly that event, and a trace naming an unknown thread must be an
// error. Returns the exit status.
async function bite(files) {
  const traces = readTraceFiles(files);
  const edits = [
    ['a CAS that reports the wrong depth', (e) => e.a === 'SubmitCAS' && e.r === 'ok', (e) => { e.d += 1; }],
    ['a Start that says a PENDING job was not pending', (e) => e.a === 'Start' && e.r === 'ok',
      (e) => { e.r = 'ErrNotPending'; }],
    ['a terminal state other than the call stored', (e) => e.a === 'TerminateRelease',
      (e) => { e.st = e.st === 'DONE' ? 'FAILED' : 'DONE'; }],
    ['a decrement that returns the wrong depth', (e) => e.a === 'TerminateRelease', (e) => { e.d -= 1; }],
    ['a TakeRequest refused on a live job', (e) => e.a === 'TakeRequest' && e.r === 'ok',
      (e) => { e.r = 'ErrTerminal'; }],
    ['an insertion whose map lost a job', (e) => e.a === 'SubmitInsert', (e) => { e.n -= 1; }],
    ['a misuser\'s second Start that succeeded', (e) => e.t[0] === 'm' && e.a === 'Start' && e.st === 'RUNNING' &&
      e.r === 'ErrNotPending', (e) => { e.r = 'ok'; }],
    ['a misuser\'s second TakeRequest that succeeded', (e) => e.t[0] === 'm' && e.a === 'TakeRequest' &&
      e.r === 'ErrRequestTaken', (e) => { e.r = 'ok'; }],
    ['a misuser\'s Finish that ended a terminal job', (e) => e.t[0] === 'm' && e.a === 'Finish' &&
      e.r === 'ErrTerminal', (e) => { e.r = 'ok'; delete e.st; }],
    ['a wait past its deadline that returned a state the job was not in', (e) => e.t[0] === 'w' &&
      e.a === 'Snapshot' && e.st === 'PENDING', (e) => { e.st = 'RUNNING'; }],
    // IdempotencyKeys.tla's check: the job is in the map, but not the
    // key's. It must be that module that rejects it: JobTable.tla rejects
    // the same edit first when the other job was evicted meanwhile, which
    // would show nothing of the key check.
    ['a keyed replay that answered a job other than the key\'s', (e, ev) => e.a === 'SubmitKeyed' &&
      e.r === 'replay' && ev.some((g) => g.a === 'SubmitInsert' && g.k !== undefined && g.k !== e.k),
    (e, ev) => { e.j = ev.findLast((g) => g.a === 'SubmitInsert' && g.k !== undefined && g.k !== e.k).j; },
    'IdempotencyKeys'],
    // Critical sections: a step the spec makes atomic split over two of
    // them, a locked step taken outside its mutex.
    ['a WaitRegister in a critical section other than its WaitCheck\'s', (e) => e.a === 'WaitRegister',
      (e) => { e.js += 1; }],
    ['a TerminateRelease in a critical section other than its call\'s', (e) => e.a === 'TerminateRelease',
      (e) => { e.js += 1; }],
    ['a live job\'s snapshot read outside its job\'s mutex', (e) => e.a === 'Snapshot' &&
      ['PENDING', 'RUNNING'].includes(e.st), (e) => { delete e.js; }],
    ['a keyed replay answered outside the table mutex', (e) => e.a === 'SubmitKeyed' && e.r === 'replay',
      (e) => { delete e.ts; }, 'IdempotencyKeys'],
    // The listing, which Listing.tla follows: a page that skips a job
    // below its cursor, one whose next cursor is not its lowest ordinal,
    // one read outside the table mutex.
    ['a page that skips a job', (e) => e.a === 'List' && (e.os ?? []).length >= 2,
      (e) => { e.os = e.os.filter((_o, x) => x !== 1); e.ids = e.ids.filter((_j, x) => x !== 1); }, 'Listing'],
    ['a page whose next cursor is not its lowest ordinal', (e) => e.a === 'List' && e.nx > 0,
      (e) => { e.nx += 1; }, 'Listing'],
    ['a page read outside the table mutex', (e) => e.a === 'List', (e) => { delete e.ts; }, 'Listing'],
  ];
  let status = 0;
  for (const [what, find, edit, by] of edits) {
    // An event that matches, with what came before it.
    const at = (tr) => tr.events.findIndex((e, k) => find(e, tr.events.slice(0, k)));
    const t = traces.find((tr) => at(tr) >= 0);
    if (t === undefined) {
      console.log(`bite: ${what}: no such event in ${traces.length} traces`);
      status = 1;
      continue;
    }
    const k = at(t);
    const cut = t.events.slice(0, k + 10).map((e) => ({ ...e }));
    edit(cut[k], cut.slice(0, k));
    const text = [t.head, ...cut.map((e) => JSON.stringify(e))].join('\n');
    const r = await checkTrace(text);
    const ok = !r.accepted && r.at === k + 1 && (by === undefined || r.module === by);
    if (!ok) status = 1;
    console.log(`bite: ${what} (${basename(t.file)}, event ${k + 1}): ` +
      `${r.accepted ? 'ACCEPTED' : `rejected at event ${r.at}`}${r.module ? ` by ${r.module}` : ''}${ok ? '' : ' (WRONG)'}`);
  }
  const { head, events } = traces[0];
  const bad = [head, ...events.slice(0, 5).map((e, k) => JSON.stringify(k === 2 ? { ...e, t: 'q1' } : e))].join('\n');
  try {
    await checkTrace(bad);
    console.log('bite: an unknown thread gave a verdict (WRONG)');
    status = 1;
  } catch (err) {
    console.log(`bite: an unknown thread is an error: ${err.message}`);
  }
  return status;
}

// traceFiles: the files named, and the .ndjson files of the folders named,
// in name order.
export function traceFiles(args) {
  const files = [];
  for (const a of args) {
    if (statSync(a).isDirectory()) {
      for (const f of readdirSync(a).sort()) if (f.endsWith('.ndjson')) files.push(join(a, f));
    } else files.push(a);
  }
  return files;
}

// One line per trace; returns the counts.
async function runFiles(files, quiet, stop) {
  const tally = { accepted: 0, rejected: 0, errors: 0 };
  for (const f of files) {
    try {
      const r = await checkTrace(readFileSync(f, 'utf8'));
      if (r.accepted) {
        tally.accepted++;
        if (!quiet) console.log(`accepted ${basename(f)}: ${r.events} events, ${r.states} states, ${r.secs.toFixed(1)}s`);
      } else {
        tally.rejected++;
        console.log(`REJECTED ${basename(f)} at event ${r.at} of ${r.events}: ${JSON.stringify(r.event)}` +
          `${r.module ? ` (by ${r.module}.tla)` : ''}`);
        if (stop) break;
      }
    } catch (err) {
      tally.errors++;
      console.log(`ERROR ${basename(f)}: ${err.message}`);
    }
  }
  return tally;
}

async function main() {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const k = args.indexOf(name);
    if (k < 0) return undefined;
    const v = args[k + 1];
    args.splice(k, 2);
    return v;
  };
  const jobs = Number(opt('--jobs') ?? availableParallelism());
  const flags = new Set(args.filter((a) => ['--worker', '--quiet', '--bite', '--stop'].includes(a)));
  const worker = flags.has('--worker');
  const quiet = flags.has('--quiet');
  const files = traceFiles(args.filter((a) => !flags.has(a)));
  if (files.length === 0) {
    console.error('trace: no trace given');
    process.exit(2);
  }
  let tally;
  const t0 = Date.now();
  if (worker || jobs <= 1 || files.length === 1 || flags.has('--bite')) {
    if (flags.has('--bite')) process.exit(await bite(files));
    tally = await runFiles(files, quiet, flags.has('--stop'));
    if (worker) {
      console.log(`#tally ${JSON.stringify(tally)}`);
      return;
    }
  } else {
    // Worker processes, each with its share of the traces.
    const shares = Array.from({ length: Math.min(jobs, files.length) }, () => []);
    files.forEach((f, k) => shares[k % shares.length].push(f));
    tally = { accepted: 0, rejected: 0, errors: 0 };
    const stopping = flags.has('--stop');
    const children = [];
    let stopped = false;
    await Promise.all(shares.map((share) => new Promise((resolve) => {
      const p = spawn(process.execPath, ['--stack-size=30000', fileURLToPath(import.meta.url), '--worker',
        ...[...flags].filter((f) => f === '--quiet' || f === '--stop'), ...share],
        { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(p);
      let buf = '';
      p.stdout.on('data', (d) => {
        buf += d;
        let k;
        while ((k = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, k);
          buf = buf.slice(k + 1);
          if (line.startsWith('#tally ')) {
            tally.accepted += JSON.parse(line.slice(7)).accepted;
          } else {
            console.log(line);
            if (line.startsWith('REJECTED ')) tally.rejected++;
            if (line.startsWith('ERROR ')) tally.errors++;
            if (stopping && line.startsWith('REJECTED ')) {
              stopped = true;
              for (const c of children) c.kill();
            }
          }
        }
      });
      p.on('close', (code) => {
        if (code !== 0 && !stopped) tally.errors++;
        resolve();
      });
    })));
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`trace: ${files.length} traces, ${tally.accepted} accepted, ${tally.rejected} rejected, ` +
    `${tally.errors} errors, ${secs}s`);
  if (tally.errors > 0) process.exit(2);
  if (tally.rejected > 0 && flags.has('--stop')) process.exit(1);
  if (tally.accepted + tally.rejected !== files.length) process.exit(2);
  process.exit(tally.rejected > 0 ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
