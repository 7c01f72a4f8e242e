// Trace validation of the SQLite store: checks that logs of the real store
// (ndjson, written by store/sqlite's TestTraceRuns under the tag
// sqlite_trace) are behaviours of DurableLedger.tla.
//
//   node spec/trace-durable.mjs [--quiet] [--stop] FILE|DIR ...
//   node spec/trace-durable.mjs --bite FILE|DIR ...
//
// The log is in commit order: per batch, one Take per write in the order
// the writer applied it, then a Commit with every row of the file; an Open
// with the RUNNING jobs it failed and the rows; a Close. The mapping onto
// the spec is all here (TRACE_DEFS):
//
//   Take   the spec's Take of the write, after the write is queued: the
//          callers are not logged, so any write may be queued (Inject),
//          and the caller actions' own rules (a runner starts only the job
//          handed to it ...) are not checked; the writer's are: the
//          answer, the row's state and the depth after it, and the rows a
//          Submit's retention deleted.
//   Keyed  a keyed submit answered from its key's row (a replay or a
//          conflict): no step; the job it names has a row.
//   Commit the spec's Commit (no step for a batch of refusals and replays
//          only), then Ack and Publish as the next events need them; the
//          committed rows must be the file's: each job's state, the
//          completion order, the depth.
//   Close  the spec's Crash: nothing volatile survives a Close either.
//   Open   the first one: no step, on empty rows; after a Close, the
//          spec's Open, with the RUNNING rows failed in the order the
//          store gave them seqs (the spec's order is any fixed one), then
//          the retention pass the store's Open runs and the spec's does
//          not (the one step the mapping adds; see OpenRetention); the rows
//          must be the file's.
//
// Time is in ticks of the store's injected clock (the header's tick and
// base); the spec's Tick moves its clock to each Take's and Open's time.
// A failed batch logs nothing: it changed nothing (the spec's CommitFails
// changes no row either). Actions the mapping does not name (the callers',
// waiters', pollers', and any a later spec adds) are never taken.
//
// Exit status: 0 every trace accepted, 1 otherwise, 2 on an error.

import { readFileSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEdits, checkEvents, readTraceFiles, tlaValue, traceFiles, TraceError, int, UNKNOWN } from './trace.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ACTIONS = new Set(['Take', 'Keyed', 'Commit', 'Open', 'Close']);
const REFUSED = 'x0'; // the one id every refused Submit claims

// parseTrace reads a log: the header and the events, with the store's
// random ids renamed j1, j2 ... in order of appearance, every Submit
// refused admission given x0 (its id never reaches a row), and times in
// ticks.
export function parseTrace(text) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new TraceError('empty trace');
  const head = JSON.parse(lines[0]);
  if (!head.config || !Number.isInteger(head.tick) || !Number.isInteger(head.base)) {
    throw new TraceError('first line is no header with the config, tick and base');
  }
  const names = new Map();
  const nameOf = (id) => {
    if (!names.has(id)) names.set(id, `j${names.size + 1}`);
    return names.get(id);
  };
  const ticks = (ns, k) => {
    if (ns === undefined) return UNKNOWN;
    const t = (ns - head.base) / head.tick;
    if (!Number.isInteger(t) || t < 0) throw new TraceError(`event ${k}: time ${ns} is no tick`);
    return t;
  };
  let refused = false;
  let maxTime = 0;
  const events = lines.slice(1).map((l, x) => {
    let e;
    try { e = JSON.parse(l); } catch (err) { throw new TraceError(`event ${x + 1}: ${err.message}`); }
    if (!ACTIONS.has(e.a)) throw new TraceError(`event ${x + 1}: unknown action ${JSON.stringify(e.a)}`);
    const out = { ...e, now: ticks(e.now, x + 1) };
    maxTime = Math.max(maxTime, out.now);
    if (e.a === 'Take' && !['Submit', 'Start', 'End'].includes(e.k)) {
      throw new TraceError(`event ${x + 1}: a Take of ${JSON.stringify(e.k)}`);
    }
    if (e.a === 'Take' && e.k === 'Submit' && e.r !== 'ok') {
      out.j = REFUSED;
      refused = true;
    } else if (e.j !== undefined) out.j = nameOf(e.j);
    out.rows = (e.rows ?? []).map((r) => ({ j: nameOf(r.j), st: r.st }));
    out.failed = (e.failed ?? []).map(nameOf);
    return out;
  });
  const jobs = [...names.values()];
  if (refused) jobs.push(REFUSED);
  if (jobs.length === 0) jobs.push('j0'); // Jobs may not be empty
  return { config: head.config, events, jobs, maxTime, crashes: events.filter((e) => e.a === 'Close').length };
}

// The record of one event: every field present.
export function traceRecord(e) {
  return { a: e.a, k: e.k ?? '', j: e.j ?? 'nojob', to: e.to ?? '', r: e.r ?? '', st: e.st ?? 'ABSENT',
    d: int(e.d), ev: int(e.ev), now: int(e.now), rows: e.rows ?? [], failed: e.failed ?? [] };
}

// The spec's variables, from its vars tuple: the trace's own steps leave
// all but the ones they name unchanged, whatever variables the spec has.
function specVars(spec) {
  const m = spec.match(/^vars\s*==\s*<<([^>]*)>>/m);
  if (!m) throw new TraceError('DurableLedger.tla no longer has vars == <<...>>');
  return m[1].split(',').map((v) => v.trim()).filter(Boolean);
}
const unchangedBut = (vars, changed) => `UNCHANGED <<${vars.filter((v) => !changed.includes(v)).join(', ')}>>`;

const traceDefs = (vars) => String.raw`
-----------------------------------------------------------------------------
(* Trace validation, generated by spec/trace-durable.mjs: each step        *)
(* follows the next logged event with the spec's action for it; between    *)
(* events, the steps the log leaves out (Inject, Tick, Ack, Publish, Open) *)
(* bring the spec to it.                                                   *)

Unknown == ${UNKNOWN}

TraceInit == Init /\ ti = 0

\* The write a Take event applies, and who waits for its answer.
TakeOp(e) ==
    CASE e.k = "Submit" -> SubmitOp(e.j)
      [] e.k = "Start" -> StartOp(e.j)
      [] OTHER -> EndOp(e.j, e.to, IF e.to = "TIMEOUT" THEN "timer" ELSE "runner")

\* A caller queues the next event's write: any caller, any write.
Inject(e) ==
    /\ up
    /\ e.a = "Take"
    /\ wphase = "take"
    /\ queue = {}
    /\ queue' = {TakeOp(e)}
    /\ claimed' = IF e.k = "Submit" THEN claimed \cup {e.j} ELSE claimed
    /\ ${unchangedBut(vars, ['queue', 'claimed'])}

\* The job's row was deleted by a Submit of this batch (gone in the open
\* transaction, not in the committed rows), which the store does at the
\* batch's end for the retention bound (retention.go): until then its
\* writes find the row there, terminal, and are refused.
PendingEvicted(j) == tx.st[j] = Absent /\ tx.gone[j] # Absent /\ db.gone[j] = Absent

\* The store's answer res to op is the spec's: Start of a terminal job is
\* ErrNotPending for the store (the ledger contract, and JobTable.tla),
\* ErrTerminal for DurableLedger.tla; a job whose deletion is pending is
\* still there for the store.
SameAnswer(op, res) ==
    LET spec == Decide(tx, op) IN
    \/ res = spec
    \/ op.kind = "Start" /\ spec = "ErrTerminal" /\ res = "ErrNotPending"
    \/ /\ PendingEvicted(op.job)
       /\ res \in {"ErrNotFound", IF op.kind = "Start" THEN "ErrNotPending" ELSE "ErrTerminal"}

\* The rows t are the file's rows of event e: each job's state, the
\* terminal ones in completion order, the stored depth.
RowOf(e, j) ==
    IF \E i \in DOMAIN e.rows : e.rows[i].j = j
       THEN e.rows[CHOOSE i \in DOMAIN e.rows : e.rows[i].j = j].st
       ELSE Absent
TerminalRows(e) == SelectSeq(e.rows, LAMBDA r : r.st \in Terminal)
RowsAre(t, e) ==
    /\ \A j \in Jobs : t.st[j] = RowOf(e, j)
    /\ Len(t.lru) = Len(TerminalRows(e))
    /\ \A i \in DOMAIN t.lru : t.lru[i] = TerminalRows(e)[i].j
    /\ t.depth = e.d

\* The retention pass of the store's Open, after the restart: the spec's
\* Open leaves it to the next Submit.
OpenRetention(e) ==
    /\ db' = Evict(db)
    /\ tx' = db'
    /\ ${unchangedBut(vars, ['db', 'tx'])}

\* The order the RUNNING rows are failed in at a restart: the store's.
TraceFailed == IF ti < Len(Trace) THEN Trace[ti + 1].failed ELSE <<>>

Silent(e) ==
    \/ Inject(e)
    \/ e.now # Unknown /\ now < e.now /\ Tick
    \/ Ack
    \/ Publish
    \/ /\ e.a = "Open"
       /\ now = e.now
       /\ Range(e.failed) = {j \in Jobs : db.st[j] = "RUNNING"}
       /\ Open

Step(e) ==
    CASE e.a = "Take" ->
            /\ now = e.now
            /\ TakeOp(e) \in queue
            /\ SameAnswer(TakeOp(e), e.r)
            /\ Take
            /\ IF PendingEvicted(e.j) THEN e.st \in {Absent, tx.gone[e.j]}
               ELSE tx'.st[e.j] = e.st
            /\ tx'.depth = e.d
            /\ e.k = "Submit" =>
                  Cardinality({j \in Jobs : tx.st[j] # Absent /\ tx'.st[j] = Absent}) = e.ev
      [] e.a = "Keyed" ->
            /\ up
            /\ wphase = "take"
            /\ e.j = "nojob" \/ tx.st[e.j] # Absent \/ PendingEvicted(e.j)
            /\ UNCHANGED vars
      [] e.a = "Commit" ->
            /\ IF batch = {} THEN up /\ wphase = "take" /\ UNCHANGED vars ELSE Commit
            /\ RowsAre(db', e)
      [] e.a = "Close" ->
            Crash
      [] e.a = "Open" ->
            /\ up
            /\ wphase = "take"
            /\ batch = {}
            /\ now = e.now
            /\ IF crashes = 0 THEN UNCHANGED vars ELSE OpenRetention(e)
            /\ RowsAre(db', e)
      [] OTHER -> FALSE

TraceNext ==
    /\ ti < Len(Trace)
    /\ \/ Step(Trace[ti + 1]) /\ ti' = ti + 1
       \/ Silent(Trace[ti + 1]) /\ ti' = ti

\* Violated exactly when the whole trace has been followed: acceptance.
TraceNotConsumed == ti < Len(Trace)
`;

// traceModule turns DurableLedger.tla into DurableLedgerTrace: one module,
// with the constant Trace, the variable ti, and the restart's order of the
// failed rows taken from the trace.
export function traceModule(spec) {
  const vars = specVars(spec);
  const edits = [
    [/^-+ MODULE DurableLedger -+$/m, (m) => m.replace('DurableLedger', 'DurableLedgerTrace')],
    [/^CONSTANTS\n/m, (m) => `${m}    Trace,\n`],
    [/^VARIABLES\n/m, (m) => `${m}    ti,\n`],
    [/^SeqOf\(S\) ==[^\n]*$/m, () => 'SeqOf(S) == TraceFailed'],
    [/^(Recovered\(t\) ==)/m, (m) => `TraceFailed == IF ti < Len(Trace) THEN Trace[ti + 1].failed ELSE <<>>\n\n${m}`],
    [/\n=+\s*$/, () => `\n${traceDefs(vars).replace(/\n\\\* The order the RUNNING[^\n]*\nTraceFailed ==[^\n]*\n/, '\n')}\n${'='.repeat(77)}\n`],
  ];
  return applyEdits(spec, 'DurableLedger.tla', edits);
}

const set = (xs) => `{${xs.map((x) => JSON.stringify(x)).join(', ')}}`;

// traceCfg: constants from the trace, the trace as the constant Trace. The
// traces carry no tenant: every job is of the one tenant without a bound
// (no Shares); and no key: a keyed Submit that admits is a Submit (Keys is
// empty), and the keys themselves are not checked.
export function traceCfg(t, upTo = t.events.length) {
  return [
    'CONSTANTS',
    `    Jobs = ${set(t.jobs)}`,
    '    Keys = {}',
    '    Waiters = {}',
    '    Pollers = {}',
    `    MaxQueue = ${t.config.MaxQueue}`,
    `    MaxCompleted = ${t.config.MaxCompleted}`,
    `    TTL = ${t.config.TTL}`,
    `    MaxTime = ${t.maxTime}`,
    '    RunnerOutcomes = {"DONE", "FAILED", "TIMEOUT"}',
    '    Deadlines = FALSE',
    `    MaxCrashes = ${t.crashes}`,
    '    MaxCommitFailures = 0',
    '    Shares = {}',
    '    TenantMax = 0',
    '    Defect = "none"',
    `    Trace = <<${t.events.slice(0, upTo).map((e) => tlaValue(traceRecord(e))).join(',\n        ')}>>`,
    'INIT TraceInit',
    'NEXT TraceNext',
    'INVARIANT TraceNotConsumed',
  ].join('\n') + '\n';
}

// checkTrace returns { accepted, events, states, secs, at?, event? }: at
// is the 1-based index of the first event the spec cannot follow.
export function checkTrace(text, spec = readFileSync(join(here, 'DurableLedger.tla'), 'utf8')) {
  const t = parseTrace(text);
  // Between two events: an Inject, Ticks, an Ack and a Publish, or an Open.
  return checkEvents(traceModule(spec), t.events, (k) => traceCfg(t, k), (k) => 8 * k + 50);
}

// bite: each edit of one event of an accepted trace (the first of files
// that has such an event) must be rejected at exactly that event, and an
// unknown action must be an error. Returns the exit status.
async function bite(files) {
  const traces = readTraceFiles(files);
  const terminal = (st) => ['DONE', 'FAILED', 'TIMEOUT'].includes(st);
  const edits = [
    ['an admission answered ErrQueueFull', (e) => e.a === 'Take' && e.k === 'Submit' && e.r === 'ok',
      (e) => { e.r = 'ErrQueueFull'; delete e.st; e.ev = 0; }],
    ['a refused Submit that was admitted', (e) => e.a === 'Take' && e.k === 'Submit' && e.r === 'ErrQueueFull',
      (e) => { e.r = 'ok'; e.st = 'PENDING'; e.d += 1; }],
    ['a Start of a PENDING job refused', (e) => e.a === 'Take' && e.k === 'Start' && e.r === 'ok',
      (e) => { e.r = 'ErrNotPending'; e.st = 'PENDING'; }],
    ['an end of a terminal job that succeeded', (e) => e.a === 'Take' && e.k === 'End' && e.r === 'ErrTerminal',
      (e) => { e.r = 'ok'; }],
    ['an end that stored another state', (e) => e.a === 'Take' && e.k === 'End' && e.r === 'ok',
      (e) => { e.st = e.st === 'DONE' ? 'FAILED' : 'DONE'; }],
    ['a write that reports the wrong depth', (e) => e.a === 'Take' && e.r === 'ok', (e) => { e.d += 1; }],
    ['a Submit whose retention deleted one row more', (e) => e.a === 'Take' && e.k === 'Submit' && e.r === 'ok',
      (e) => { e.ev += 1; }],
    ['a commit that lost a row', (e) => e.a === 'Commit' && (e.rows ?? []).length > 0,
      (e) => { e.rows = e.rows.slice(1); }],
    ['a commit whose completion order is swapped', (e) => e.a === 'Commit' &&
      (e.rows ?? []).filter((r) => terminal(r.st)).length >= 2, (e) => {
      const k = e.rows.findIndex((r) => terminal(r.st));
      [e.rows[k], e.rows[k + 1]] = [e.rows[k + 1], e.rows[k]];
    }],
    ['a restart that left a RUNNING job RUNNING', (e) => e.a === 'Open' && (e.failed ?? []).length > 0,
      (e) => {
        const j = e.failed.shift();
        const r = e.rows.find((x) => x.j === j);
        if (r) r.st = 'RUNNING';
        e.d += 1;
      }],
    ['a restart that put a RUNNING job back to PENDING', (e) => e.a === 'Open' && (e.failed ?? []).length > 0,
      (e) => {
        const j = e.failed.shift();
        const r = e.rows.find((x) => x.j === j);
        if (r) r.st = 'PENDING'; else e.rows.unshift({ j, st: 'PENDING' });
        e.d += 1;
      }],
    ['a restart that failed a PENDING job', (e) => e.a === 'Open' && (e.rows ?? []).some((r) => r.st === 'PENDING'),
      (e) => {
        const r = e.rows.find((x) => x.st === 'PENDING');
        r.st = 'FAILED';
        e.failed = [...(e.failed ?? []), r.j];
        e.d -= 1;
      }],
  ];
  let status = 0;
  for (const [what, find, edit] of edits) {
    const at = (tr) => tr.events.findIndex((e) => find(e));
    const t = traces.find((tr) => at(tr) >= 0);
    if (t === undefined) {
      console.log(`bite: ${what}: no such event in ${traces.length} traces`);
      status = 1;
      continue;
    }
    const k = at(t);
    const cut = t.events.slice(0, k + 10).map((e) => structuredClone(e));
    edit(cut[k]);
    const text = [t.head, ...cut.map((e) => JSON.stringify(e))].join('\n');
    const r = await checkTrace(text);
    const ok = !r.accepted && r.at === k + 1;
    if (!ok) status = 1;
    console.log(`bite: ${what} (${basename(t.file)}, event ${k + 1}): ` +
      `${r.accepted ? 'ACCEPTED' : `rejected at event ${r.at}`}${ok ? '' : ' (WRONG)'}`);
  }
  const { head, events } = traces[0];
  const bad = [head, ...events.slice(0, 5).map((e, k) => JSON.stringify(k === 2 ? { ...e, a: 'Rewind' } : e))].join('\n');
  try {
    await checkTrace(bad);
    console.log('bite: an unknown action gave a verdict (WRONG)');
    status = 1;
  } catch (err) {
    console.log(`bite: an unknown action is an error: ${err.message}`);
  }
  return status;
}

async function main() {
  const args = process.argv.slice(2);
  const flags = new Set(args.filter((a) => ['--quiet', '--bite', '--stop'].includes(a)));
  const files = traceFiles(args.filter((a) => !flags.has(a)));
  if (files.length === 0) {
    console.error('trace-durable: no trace given');
    process.exit(2);
  }
  if (flags.has('--bite')) process.exit(await bite(files));
  const tally = { accepted: 0, rejected: 0, errors: 0 };
  const t0 = Date.now();
  for (const f of files) {
    try {
      const r = await checkTrace(readFileSync(f, 'utf8'));
      if (r.accepted) {
        tally.accepted++;
        if (!flags.has('--quiet')) {
          console.log(`accepted ${basename(f)}: ${r.events} events, ${r.states} states, ${r.secs.toFixed(1)}s`);
        }
      } else {
        tally.rejected++;
        console.log(`REJECTED ${basename(f)} at event ${r.at} of ${r.events}: ${JSON.stringify(r.event)}`);
        if (flags.has('--stop')) break;
      }
    } catch (err) {
      tally.errors++;
      console.log(`ERROR ${basename(f)}: ${err.message}`);
    }
  }
  console.log(`trace-durable: ${files.length} traces, ${tally.accepted} accepted, ${tally.rejected} rejected, ` +
    `${tally.errors} errors, ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  if (tally.errors > 0) process.exit(2);
  process.exit(tally.rejected > 0 ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
