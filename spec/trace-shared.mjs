// Trace validation of the PostgreSQL store: checks that logs of two or
// three replicas of the real store on one database (ndjson, written by
// store/postgres's TestTraceRuns under the tag postgres_trace) are
// behaviours of SharedLedger.tla.
//
//   node spec/trace-shared.mjs [--quiet] [--stop] FILE|DIR ...
//   node spec/trace-shared.mjs --bite FILE|DIR ...
//
// The log is in commit order, as the database decided it (every traced
// transaction ends by taking the next value of one counter row, which it
// holds until it commits); each event names its replica and carries the
// depth and every row its commit left. The mapping onto the spec is all
// here (traceDefs):
//
//   Batch  the spec's Commit(r, n, w) of the writer's batch: n Submits,
//          the ids admitted (the spec admits exactly as many, and these),
//          the worker's claim (the job it took) or end (DONE, its answer
//          ok or ErrTerminal). A claim answered ErrNoWork is no write of
//          the spec's: SKIP LOCKED passes over a row another replica's
//          claim holds, which commits after it, so that claim's batch
//          must admit nothing and every PENDING job must be one whose
//          next claim is another replica's, or one admitted by a commit
//          the claim did not see (after the counter it read); the batch is
//          no step if it had no Submit. After a claim, the spec's Transfer (the request came
//          with the claim) is a step the mapping may take.
//   Reap   the spec's Reap by the replica, once per job it ended.
//   Open   the first of each replica: no step (Init has every replica
//          serving). After a Close: the spec's RecoverFail of each job it
//          failed, its Open, then the retention pass the store's Open
//          runs and the spec's does not (the one step the mapping adds,
//          OpenRetention).
//   Close  the spec's Crash: nothing of the replica but the database
//          survives a Close either.
//
// After each event, the committed rows must be the spec's: each job's
// state (a row deleted by retention is absent), a RUNNING job's lease
// (owner and expiry), the completion order, the depth. Time is in ticks of
// the stores' injected clock (the header's tick and base); the spec's Tick
// moves the database clock to each event's time, and renews the leases of
// the jobs that serving replicas hold, as the driver's renewals after
// each tick do. Renewals are not logged (their effect is in the rows),
// nor are waiters, listeners and failed batches (the driver causes none).
//
// Exit status: 0 every trace accepted, 1 otherwise, 2 on an error.

import { readFileSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyEdits, checkEvents, readTraceFiles, tlaValue, traceFiles, TraceError, int, UNKNOWN } from './trace.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ACTIONS = new Set(['Batch', 'Reap', 'Open', 'Close']);

// parseTrace reads a log: the header and the events, with the store's
// random ids renamed j1, j2 ... in order of appearance, times in ticks,
// and each replica's first Open marked.
export function parseTrace(text) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new TraceError('empty trace');
  const head = JSON.parse(lines[0]);
  if (!head.config || !Number.isInteger(head.tick) || !Number.isInteger(head.base) ||
      !Array.isArray(head.replicas) || head.replicas.length === 0) {
    throw new TraceError('first line is no header with the config, tick, base and replicas');
  }
  const names = new Map();
  const nameOf = (id) => {
    if (!names.has(id)) names.set(id, `j${names.size + 1}`);
    return names.get(id);
  };
  const ticks = (ns, k) => {
    if (ns === undefined || ns === null) return UNKNOWN;
    const t = (ns - head.base) / head.tick;
    if (!Number.isInteger(t) || t < 0) throw new TraceError(`event ${k}: time ${ns} is no tick`);
    return t;
  };
  const opened = new Set();
  const down = new Set();
  let maxTime = 0;
  let maxSub = 1;
  let last = -Infinity;
  const events = lines.slice(1).map((l, x) => {
    const k = x + 1;
    let e;
    try { e = JSON.parse(l); } catch (err) { throw new TraceError(`event ${k}: ${err.message}`); }
    if (!ACTIONS.has(e.a)) throw new TraceError(`event ${k}: unknown action ${JSON.stringify(e.a)}`);
    if (!head.replicas.includes(e.r)) throw new TraceError(`event ${k}: unknown replica ${JSON.stringify(e.r)}`);
    if (e.a === 'Batch' && !['', 'claim', 'end', undefined].includes(e.w)) {
      throw new TraceError(`event ${k}: a batch with the worker's write ${JSON.stringify(e.w)} (one worker a replica)`);
    }
    if (!Number.isInteger(e.n) || e.n < 0) throw new TraceError(`event ${k}: no commit counter`);
    const n = e.a === 'Close' ? e.n + 0.5 : e.n;
    if (e.a === 'Close' ? !(n >= last) : !(n > last)) throw new TraceError(`event ${k}: counter ${e.n} out of commit order`);
    last = n;
    const out = { ...e, now: ticks(e.now, k), first: false };
    if (e.a === 'Open') {
      if (opened.has(e.r) && !down.has(e.r)) throw new TraceError(`event ${k}: ${e.r} opened twice without a Close`);
      out.first = !opened.has(e.r);
      opened.add(e.r);
      down.delete(e.r);
    } else if (e.a === 'Close') {
      down.add(e.r);
    } else if (!opened.has(e.r) || down.has(e.r)) {
      throw new TraceError(`event ${k}: ${e.a} of ${e.r}, which is not open`);
    }
    maxTime = Math.max(maxTime, out.now);
    maxSub = Math.max(maxSub, e.sub ?? 0);
    if (e.j !== undefined && e.j !== '') out.j = nameOf(e.j); else delete out.j;
    out.new = (e.new ?? []).map(nameOf);
    out.jobs = (e.jobs ?? []).map(nameOf);
    out.rows = (e.rows ?? []).map((r) => ({ j: nameOf(r.j), st: r.st, o: r.o ?? '', e: ticks(r.e, k) }));
    return out;
  });
  // A claim answered ErrNoWork saw the commits up to its seen counter at
  // least, and may have passed over the PENDING jobs that another
  // replica's claim held locked: it may skip those whose next claim is
  // that replica's, and those admitted after seen.
  const admitted = new Map();
  events.forEach((e, k) => {
    for (const j of e.new) admitted.set(j, e.n);
    e.skip = [];
    if (e.a !== 'Batch' || e.w !== 'claim' || e.j !== undefined) return;
    if (!Number.isInteger(e.seen)) throw new TraceError(`event ${k + 1}: a claim without the counter it saw`);
    const next = new Map();
    for (const g of events.slice(k + 1)) {
      if (g.a === 'Batch' && g.w === 'claim' && g.j !== undefined && !next.has(g.j)) next.set(g.j, g.r);
    }
    e.skip = [...next].filter(([, r]) => r !== e.r).map(([j]) => j);
    for (const [j, n] of admitted) if (n > e.seen && !e.skip.includes(j)) e.skip.push(j);
  });
  // Ids for the Submits refused: the spec claims one for each of a batch.
  const jobs = [...names.values(), ...Array.from({ length: maxSub }, (_v, i) => `x${i + 1}`)];
  return { config: head.config, replicas: head.replicas, events, jobs, maxTime, maxSub,
    crashes: events.filter((e) => e.a === 'Close').length };
}

// The record of one event: every field present.
export function traceRecord(e) {
  return { a: e.a, r: e.r, now: int(e.now), first: e.first ? 1 : 0, sub: int(e.sub ?? 0), new: e.new ?? [],
    w: e.w ?? '', j: e.j ?? 'nojob', er: e.er ?? '', to: e.to ?? '', jobs: e.jobs ?? [], d: int(e.d),
    rows: e.rows ?? [], skip: e.skip ?? [] };
}

// The spec's variables, from its vars tuple.
function specVars(spec) {
  const m = spec.match(/^vars\s*==\s*<<([^>]*)>>/m);
  if (!m) throw new TraceError('SharedLedger.tla no longer has vars == <<...>>');
  return m[1].split(',').map((v) => v.trim()).filter(Boolean);
}
const unchangedBut = (vars, changed) => `UNCHANGED <<${vars.filter((v) => !changed.includes(v)).join(', ')}>>`;

const traceDefs = (vars) => String.raw`
-----------------------------------------------------------------------------
(* Trace validation, generated by spec/trace-shared.mjs: each step         *)
(* follows the next logged event with the spec's action for it; between    *)
(* events, the steps the log leaves out (Tick, Transfer, a Reap or         *)
(* RecoverFail of one of several jobs, Open) bring the spec to it.         *)

Unknown == ${UNKNOWN}

TraceInit == Init /\ ti = 0

\* The rows e logged are the committed ones after the step: each job's
\* state, a RUNNING job's lease, the completion order, the depth.
RowOf(ev, j) ==
    IF \E i \in DOMAIN ev.rows : ev.rows[i].j = j
       THEN ev.rows[CHOOSE i \in DOMAIN ev.rows : ev.rows[i].j = j].st
       ELSE Absent
TerminalRows(ev) == SelectSeq(ev.rows, LAMBDA x : x.st \in Terminal)
RowsAre(ev) ==
    /\ \A j \in Jobs : (IF j \in table' THEN st'[j] ELSE Absent) = RowOf(ev, j)
    /\ \A i \in DOMAIN ev.rows :
          ev.rows[i].st = "RUNNING" =>
             /\ owner'[ev.rows[i].j] = ev.rows[i].o
             /\ expiry'[ev.rows[i].j] = ev.rows[i].e
    /\ Len(lru') = Len(TerminalRows(ev))
    /\ \A i \in DOMAIN lru' : lru'[i] = TerminalRows(ev)[i].j
    /\ depth' = ev.d

\* The worker's write of a batch, as the spec has it: a claim that took a
\* job, or an end.
WorkerWrites(ev) == ev.w = "end" \/ (ev.w = "claim" /\ ev.j # "nojob")

\* The end of a batch: the worker's DONE of the job it holds, answered ok
\* exactly when the job was live.
EndAnswered(ev) ==
    /\ ev.to = "DONE"
    /\ wk[ev.r].job = ev.j
    /\ (ev.er = "ok") = (st[ev.j] \in Live)
    /\ ev.er \in {"ok", "ErrTerminal"}

\* A claim answered ErrNoWork: its batch admitted nothing, and every
\* PENDING job was one that another replica's claim, committed later, held.
NoWork(ev) ==
    /\ Len(ev.new) = 0
    /\ \A p \in table : st[p] = "PENDING" => p \in Range(ev.skip)

BatchStep(ev) ==
    /\ dbnow = ev.now
    /\ IF ev.sub = 0 /\ ~WorkerWrites(ev)
          THEN phase[ev.r] = "serving" /\ UNCHANGED vars
          ELSE Batch(ev.r, ev.sub, WorkerWrites(ev)) /\ Commit(ev.r, ev.sub, WorkerWrites(ev))
    /\ (ev.w = "claim" /\ ev.j = "nojob") => NoWork(ev)
    /\ (ev.w = "claim" /\ ev.j # "nojob") => (wk'[ev.r].pc = "Transfer" /\ wk'[ev.r].job = ev.j)
    /\ ev.w = "end" => EndAnswered(ev)

\* A step that ends only jobs e names, at e's time.
OnlyJobsOf(ev) ==
    /\ dbnow = ev.now
    /\ \A j \in Jobs : st'[j] # st[j] => j \in Range(ev.jobs)

\* The retention pass of the store's Open, after the restart: the spec's
\* Open leaves it to the next batch that admits.
OpenRetention ==
    LET kept == Swept(lru, completedAt) IN
    /\ lru' = kept
    /\ table' = table \ (Range(lru) \ Range(kept))
    /\ ${unchangedBut(vars, ['lru', 'table'])}

Silent(ev) ==
    \/ ev.now # Unknown /\ dbnow < ev.now /\ Tick
    \/ \E r \in Replicas : Transfer(r)
    \/ ev.a = "Reap" /\ Reap(ev.r) /\ OnlyJobsOf(ev)
    \/ ev.a = "Open" /\ ev.first = 0 /\ RecoverFail(ev.r) /\ OnlyJobsOf(ev)
    \/ ev.a = "Open" /\ ev.first = 0 /\ dbnow = ev.now /\ Open(ev.r)

Step(ev) ==
    CASE ev.a = "Batch" ->
            BatchStep(ev) /\ RowsAre(ev)
      [] ev.a = "Reap" ->
            /\ Reap(ev.r)
            /\ OnlyJobsOf(ev)
            /\ \A j \in Range(ev.jobs) : st'[j] = "FAILED"
            /\ RowsAre(ev)
      [] ev.a = "Open" /\ ev.first = 1 ->
            /\ dbnow = ev.now
            /\ ev.jobs = <<>>
            /\ UNCHANGED vars
            /\ RowsAre(ev)
      [] ev.a = "Open" ->
            /\ dbnow = ev.now
            /\ phase[ev.r] = "serving"
            /\ \A j \in Range(ev.jobs) : st[j] = "FAILED"
            /\ OpenRetention
            /\ RowsAre(ev)
      [] ev.a = "Close" ->
            Crash(ev.r)
      [] OTHER -> FALSE

TraceNext ==
    /\ ti < Len(Trace)
    /\ \/ Step(Trace[ti + 1]) /\ ti' = ti + 1
       \/ Silent(Trace[ti + 1]) /\ ti' = ti

\* Violated exactly when the whole trace has been followed: acceptance.
TraceNotConsumed == ti < Len(Trace)
`;

// traceModule turns SharedLedger.tla into SharedLedgerTrace: one module,
// with the constant Trace, the variable ti, and the ids a batch admits
// taken from the trace.
export function traceModule(spec) {
  const vars = specVars(spec);
  const edits = [
    [/^-+ MODULE SharedLedger -+$/m, (m) => m.replace('SharedLedger', 'SharedLedgerTrace')],
    [/^CONSTANTS\n/m, (m) => `${m}    Trace,\n`],
    [/^VARIABLES\n/m, (m) => `${m}    ti,\n`],
    // The ids of a batch's admissions are the trace's: exactly as many as
    // the spec admits, or no successor.
    [/^NewIds\(p, k\) ==[^\n]*$/m, (m) => 'TraceNew == IF ti < Len(Trace) THEN Range(Trace[ti + 1].new) ELSE {}\n' +
      'TraceIds(k) == {s \\in {TraceNew} : Cardinality(s) = k}\n' + m],
    [/\\E new \\in \{AdmittedIds\(ts, adm\)\} :/g,
      () => '\\E new \\in TraceIds(Cardinality(adm)) :'],
    [/\n=+\s*$/, () => `\n${traceDefs(vars)}\n${'='.repeat(77)}\n`],
  ];
  return applyEdits(spec, 'SharedLedger.tla', edits);
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
    `    Replicas = ${set(t.replicas)}`,
    '    Waiters = {}',
    `    Submitters = ${t.maxSub}`,
    `    MaxQueue = ${t.config.MaxQueue}`,
    `    MaxCompleted = ${t.config.MaxCompleted}`,
    `    TTL = ${t.config.TTL}`,
    `    LeaseTTL = ${t.config.Lease}`,
    `    MaxTime = ${t.maxTime}`,
    `    MaxCrashes = ${t.crashes}`,
    '    MaxDrops = 0',
    '    MaxFailures = 0',
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
export function checkTrace(text, spec = readFileSync(join(here, 'SharedLedger.tla'), 'utf8')) {
  const t = parseTrace(text);
  // Between two events: Ticks, Transfers, Reaps, RecoverFails, an Open.
  return checkEvents(traceModule(spec), t.events, (k) => traceCfg(t, k), (k) => 4 * k + t.maxTime + 50);
}

const terminal = (st) => ['DONE', 'FAILED', 'TIMEOUT'].includes(st);

// bite: each edit of one event of an accepted trace (the first of files
// that has such an event) must be rejected at exactly that event, and an
// unknown action must be an error. Returns the exit status.
async function bite(files) {
  const traces = readTraceFiles(files);
  const edits = [
    ['an admission answered ErrQueueFull', (e) => e.a === 'Batch' && (e.new ?? []).length > 0, (e) => {
      const j = e.new.pop();
      e.rows = e.rows.filter((r) => r.j !== j);
      e.d -= 1;
    }],
    ['a Submit refused with room in the queue that was admitted', (e) => e.a === 'Batch' &&
      (e.sub ?? 0) > (e.new ?? []).length, (e) => {
      e.new = [...(e.new ?? []), 'EDITED'];
      e.rows.unshift({ j: 'EDITED', st: 'PENDING' });
      e.d += 1;
    }],
    ['an end of a live job answered ErrTerminal', (e) => e.a === 'Batch' && e.w === 'end' && e.er === 'ok',
      (e) => { e.er = 'ErrTerminal'; }],
    ['an end that stored FAILED', (e) => e.a === 'Batch' && e.w === 'end' && e.er === 'ok' &&
      e.rows.some((r) => r.j === e.j), (e) => { e.rows.find((r) => r.j === e.j).st = 'FAILED'; }],
    ['a claim whose lease had lapsed when it was taken', (e) => e.a === 'Batch' && e.w === 'claim' && e.j,
      (e) => { e.rows.find((r) => r.j === e.j).e = e.now; }],
    ['a claim under another replica\'s name', (e, t) => e.a === 'Batch' && e.w === 'claim' && e.j &&
      t.replicas.length > 1, (e, t) => { e.rows.find((r) => r.j === e.j).o = t.replicas.find((r) => r !== e.r); }],
    ['a claim of a job no longer PENDING', (e, _t, ev) => e.a === 'Batch' && e.w === 'claim' && e.j &&
      ev.length > 0 && ev.at(-1).rows?.some((r) => terminal(r.st)), (e, _t, ev) => {
      const done = ev.at(-1).rows.find((r) => terminal(r.st)).j;
      e.rows = e.rows.filter((r) => r.j !== e.j && r.j !== done);
      e.rows.unshift({ j: done, st: 'RUNNING', o: e.r, e: e.rows.find(() => true)?.e });
      e.j = done;
    }],
    ['a claim answered ErrNoWork beside a free PENDING job', (e, _t, ev) => e.a === 'Batch' && e.w === 'claim' &&
      e.j && ev.at(-1)?.rows?.filter((r) => r.st === 'PENDING').length === 1 && e.rows.filter((r) => r.st === 'PENDING').length === 0,
    (e, _t, ev) => {
      const r = e.rows.find((x) => x.j === e.j);
      r.st = 'PENDING';
      delete r.o;
      delete r.e;
      delete e.j;
    }],
    ['a batch that reports the wrong depth', (e) => e.a === 'Batch' && (e.new ?? []).length > 0, (e) => { e.d += 1; }],
    ['a commit that lost a row', (e) => e.a === 'Batch' && (e.rows ?? []).length > 0,
      (e) => { e.rows = e.rows.slice(1); }],
    ['a commit whose completion order is swapped', (e) => e.a === 'Batch' &&
      (e.rows ?? []).filter((r) => terminal(r.st)).length >= 2, (e) => {
      const k = e.rows.findIndex((r) => terminal(r.st));
      [e.rows[k], e.rows[k + 1]] = [e.rows[k + 1], e.rows[k]];
    }],
    ['a reaper that also ended a job whose lease had not lapsed', (e) => e.a === 'Reap' &&
      (e.rows ?? []).some((r) => r.st === 'RUNNING'), (e) => {
      const r = e.rows.find((x) => x.st === 'RUNNING');
      e.rows = [...e.rows.filter((x) => x !== r), { j: r.j, st: 'FAILED' }];
      e.jobs = [...e.jobs, r.j];
      e.d -= 1;
    }],
    ['a restart that left its own RUNNING job RUNNING', (e) => e.a === 'Open' && (e.jobs ?? []).length > 0 &&
      (e.rows ?? []).some((r) => r.j === e.jobs[0]), (e, _t, ev) => {
      const j = e.jobs.shift();
      const was = ev.findLast((g) => g.rows?.some((r) => r.j === j && r.st === 'RUNNING'));
      const r = e.rows.find((x) => x.j === j);
      Object.assign(r, was.rows.find((x) => x.j === j));
      e.rows = [r, ...e.rows.filter((x) => x !== r)];
      e.d += 1;
    }],
    ['a restart that failed another replica\'s RUNNING job', (e) => e.a === 'Open' &&
      (e.rows ?? []).some((r) => r.st === 'RUNNING' && r.o !== e.r), (e) => {
      const r = e.rows.find((x) => x.st === 'RUNNING' && x.o !== e.r);
      e.rows = [...e.rows.filter((x) => x !== r), { j: r.j, st: 'FAILED' }];
      e.jobs = [...(e.jobs ?? []), r.j];
      e.d -= 1;
    }],
  ];
  let status = 0;
  for (const [what, find, edit] of edits) {
    const at = (tr) => tr.events.findIndex((e, k) => find(e, tr, tr.events.slice(0, k)));
    const t = traces.find((tr) => {
      tr.replicas = JSON.parse(tr.head).replicas;
      return at(tr) >= 0;
    });
    if (t === undefined) {
      console.log(`bite: ${what}: no such event in ${traces.length} traces`);
      status = 1;
      continue;
    }
    const k = at(t);
    const cut = t.events.slice(0, k + 10).map((e) => structuredClone(e));
    edit(cut[k], t, cut.slice(0, k));
    const text = [t.head, ...cut.map((e) => JSON.stringify(e))].join('\n');
    const r = await checkTrace(text);
    const ok = !r.accepted && r.at === k + 1;
    if (!ok) status = 1;
    console.log(`bite: ${what} (${basename(t.file)}, event ${k + 1}): ` +
      `${r.accepted ? 'ACCEPTED' : `rejected at event ${r.at}`}${ok ? '' : ' (WRONG)'}`);
  }
  const { head, events } = traces[0];
  const bad = [head, ...events.slice(0, 5).map((e, k) => JSON.stringify(k === 3 ? { ...e, a: 'Rewind' } : e))].join('\n');
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
    console.error('trace-shared: no trace given');
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
  console.log(`trace-shared: ${files.length} traces, ${tally.accepted} accepted, ${tally.rejected} rejected, ` +
    `${tally.errors} errors, ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  if (tally.errors > 0) process.exit(2);
  process.exit(tally.rejected > 0 ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
