// Trace validation of the listing: a run whose lister walked the listing
// (List events, thread l1) is followed by Listing.tla too, in a module
// built from it as trace.mjs builds JobTable.tla's and IdempotencyKeys.tla's:
// one self-contained module with the trace index spliced into its
// variables, a TraceNext that follows each record with the action it names
// and the values Go observed, and a cfg whose constants come from the
// trace (N, the admissions; Limit, the pages' limit; Filter "any") and
// whose constant Trace is the records. Acceptance is "ti < Len(Trace)"
// violated, that is the whole trace followed.
//
// Records (listingRecords): every SubmitInsert, keyed or not, is Submit
// with the ordinal Go gave the job, which must be the spec's next; every
// Evict is Evict of the ordinal Go logged, which must be held; a page is
// Page with the cursor Go was called with, which must be the walk's, the
// ordinals it listed, which must be the spec's page, and its next cursor,
// which must be the spec's (the page's lowest ordinal) unless Go ended the
// walk. A page called with cursor 0 starts a walk: StartWalk, then Page.
// Go ends a walk whose last page is full without an empty page after it
// (nextCursorLocked: nothing older is held); the spec reads one more page,
// which must then be empty at the same moment: a record Last, at the same
// event. A page whose ids are not those of the jobs admitted with its
// ordinals is refused at that page.
//
// Listing.tla has one walk per behaviour (pc ends at "Done"); the lister
// walks several times a run. The module lets StartWalk start a new walk
// from "Done" too, with the cursor and the listed jobs reset (one edit of
// the spec text, below), rather than checking each walk as a projection of
// its own: one check a trace instead of one a walk, and the admissions and
// evictions between walks are followed once, in order. Nothing a walk
// checks depends on an earlier walk: StartWalk resets everything the walk
// owns (atStart is set anew).
//
// Sections: each record carries the table mutex's section of its event
// (s). Submit, and every page, must open a section after the last one
// followed (lsec), an eviction must be in a section after it and leaves
// it to the insertion that follows in the same section, and Last must be
// in its page's section: a page read without the table mutex (no section)
// is refused.
//
// Out of reach of this module: a filter (Filter is "any"; a page logged
// with a filter is an error), and a short page whose cursor goes on (the
// scan budget, 1024 jobs, far above what a trace run holds: the spec ends
// the walk on a short page, so such a page would be refused).

// trace.mjs imports this module: what it takes from there is read only
// when a function here runs, after both modules are evaluated.
import { TraceError, UNKNOWN, NO_SECTION, tlaValue, applyEdits, int } from './trace.mjs';

const str = (s) => JSON.stringify(s);

// listingRecords returns the records of the parsed trace t that
// Listing.tla follows, each with at, the 0-based index of its event, and
// the limit of its pages (undefined when it has none: nothing to follow).
export function listingRecords(t) {
  // A run that does not list (FuzzTrace's, a trace of a build before the
  // ordinals were logged) is no run of Listing.tla's walker.
  if (!t.events.some((e) => e.a === 'List')) return { recs: [], limit: undefined };
  const recs = [];
  const ordOf = new Map(); // job name -> the ordinal of its SubmitInsert
  const limits = new Set();
  const need = (v, what, x) => {
    if (!Number.isInteger(v)) throw new TraceError(`event ${x + 1}: ${t.events[x].a} without ${what}`);
    return v;
  };
  const sec = (e) => (Number.isInteger(e.ts) ? e.ts : UNKNOWN);
  t.events.forEach((e, x) => {
    if (e.a === 'SubmitInsert') {
      const o = need(e.o, 'its ordinal (o)', x);
      ordOf.set(e.j, o);
      recs.push({ a: 'Submit', o, s: sec(e), at: x });
    } else if (e.a === 'Evict') {
      recs.push({ a: 'Evict', o: need(e.o, 'its ordinal (o)', x), s: sec(e), at: x });
    } else if (e.a === 'List') {
      if (e.f !== undefined) throw new TraceError(`event ${x + 1}: a filtered page (${str(e.f)}): only Filter "any" is followed`);
      const lim = need(e.lim, 'its limit (lim)', x);
      limits.add(lim);
      const b = need(e.b, 'its cursor (b)', x);
      const nx = need(e.nx, 'its next cursor (nx)', x);
      const os = e.os ?? [];
      const ids = e.ids ?? [];
      if (!os.every(Number.isInteger) || ids.length !== os.length) {
        throw new TraceError(`event ${x + 1}: a page whose ordinals (os) and ids do not pair up`);
      }
      // The ordinal each id listed was admitted with; 0 for an id never
      // admitted in the trace.
      const io = ids.map((j) => ordOf.get(j) ?? 0);
      if (b === 0) recs.push({ a: 'StartWalk', at: x });
      recs.push({ a: 'Page', b, os, io, nx, s: sec(e), at: x });
      if (nx === 0 && os.length === lim && lim > 0) {
        recs.push({ a: 'Last', b: os[os.length - 1], s: sec(e), at: x });
      }
    }
  });
  if (limits.size > 1) throw new TraceError(`pages with limits ${[...limits].join(', ')}: Limit is one constant`);
  return { recs, limit: [...limits][0] };
}

const lsDefs = () => String.raw`
-----------------------------------------------------------------------------
(* Trace validation, generated by spec/trace-listing.mjs: each step        *)
(* follows the next record of a run that lists (see listingRecords) with  *)
(* the action it names, and checks the values Go observed there.          *)

Unknown == ${UNKNOWN}
NoSection == ${NO_SECTION}

TraceInit == Init /\ ti = 0 /\ lsec = NoSection

\* lsec: the latest section of the table mutex followed.
Opens(sec) == sec = Unknown \/ (sec # NoSection /\ sec > lsec)
Keeps(sec) == sec = Unknown \/ sec = lsec
After(sec) == IF sec = Unknown THEN lsec ELSE sec

Step(e) ==
    CASE e.a = "Submit" ->
            /\ nextOrd = e.o
            /\ Submit
            /\ Opens(e.s) /\ lsec' = After(e.s)
      [] e.a = "Evict" ->
            /\ e.o \in Ords
            /\ Evict(e.o)
            /\ Opens(e.s) /\ UNCHANGED lsec
      [] e.a = "StartWalk" ->
            StartWalk /\ UNCHANGED lsec
      \* Go's page is the spec's: the cursor it was called with, the jobs
      \* it listed (and the ids are those admitted with these ordinals),
      \* and, unless Go ended the walk there, the next cursor.
      [] e.a = "Page" ->
            /\ cursor = e.b
            /\ Page
            /\ listed' = listed \o e.os
            /\ e.io = e.os
            /\ (e.nx # 0 => (pc' = "Walking" /\ cursor' = e.nx))
            /\ Opens(e.s) /\ lsec' = After(e.s)
      \* Go ended the walk on a full page: the spec's next page, read at
      \* the same moment, is empty.
      [] e.a = "Last" ->
            /\ cursor = e.b
            /\ Page
            /\ listed' = listed
            /\ Keeps(e.s) /\ UNCHANGED lsec
      [] OTHER -> FALSE

TraceNext ==
    /\ ti < Len(Trace)
    /\ \E e \in {Trace[ti + 1]} : Step(e)
    /\ ti' = ti + 1

TraceNotConsumed == ti < Len(Trace)
`;

// listingModule turns Listing.tla into ListingTrace.
export function listingModule(spec) {
  const edits = [
    [/^-+ MODULE Listing -+$/m, (m) => m.replace('Listing', 'ListingTrace')],
    [/^EXTENDS Naturals, Sequences, FiniteSets$/m, () => 'EXTENDS Integers, Sequences, FiniteSets'],
    // the last constant, then Trace
    [/^(\s*)Filter(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}Filter,${ws}Trace`],
    // the last variable, then the trace index and the table mutex's section
    [/^(\s*)atStart(\s*\\\*[^\n]*)?$/m, (_m, ws) => `${ws}atStart,${ws}ti,${ws}lsec`],
    // A new walk may start once the last one is over: the spec's walker
    // walks once, the lister of a run several times, one after another.
    [/^StartWalk ==\n {4}\/\\ pc = "Idle"\n((?: {4}\/\\ [^\n]*\n)*?) {4}\/\\ UNCHANGED <<nextOrd, st, js, cursor, listed>>$/m,
      (_m, body) => 'StartWalk ==\n    /\\ pc \\in {"Idle", "Done"}\n' + body +
        '    /\\ cursor\' = 0\n    /\\ listed\' = <<>>\n    /\\ UNCHANGED <<nextOrd, st, js>>'],
    [/\n=+\s*$/, () => `\n${lsDefs()}\n${'='.repeat(77)}\n`],
  ];
  return applyEdits(spec, 'Listing.tla', edits);
}

// The record of one of listingRecords' records, every field present.
export function listingRecord(r) {
  return { a: r.a, o: int(r.o), b: int(r.b), os: r.os ?? [], io: r.io ?? [], nx: int(r.nx), s: int(r.s) };
}

// listingCfg: the constants from the trace, the records as Trace.
export function listingCfg(recs, limit, upTo = recs.length) {
  return [
    'CONSTANTS',
    `    N = ${recs.filter((r) => r.a === 'Submit').length}`,
    `    Limit = ${limit}`,
    '    Defect = "none"',
    '    Filter = "any"',
    `    Trace = <<${recs.slice(0, upTo).map((r) => tlaValue(listingRecord(r))).join(',\n        ')}>>`,
    'INIT TraceInit',
    'NEXT TraceNext',
    'INVARIANT TraceNotConsumed',
  ].join('\n') + '\n';
}
