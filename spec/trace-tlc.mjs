// Trace validation with TLC, for maintainers: the same check as trace.mjs,
// with TLC in place of tla-checker. Each module the trace is followed with
// (JobTable.tla; IdempotencyKeys.tla for a keyed run; Listing.tla for a run
// that lists) is generated as trace.mjs generates it, and its records (the
// fields trace.mjs's cfg gives them, every one present) are written as an
// ndjson file beside it. A module of a few lines extends it and reads the
// file with the Json module's ndJsonDeserialize, in place of the constant
// Trace; deadlock is not checked, and a POSTCONDITION checks,
// once the search is over, that its deepest state has followed every
// record (TLCGet("stats").diameter is the initial state and one state per
// record followed). TLC's exit status 0 with the postcondition printed
// true is acceptance; the postcondition false (exit 10) is a rejection, at
// the first record no state followed; anything else (a parse or
// evaluation error, a jar missing, no postcondition printed) is an error,
// never a verdict. TLC is not a dependency of the build or of CI.
//
//   TLA2TOOLS=/path/to/tla2tools.jar node spec/trace-tlc.mjs FILE|DIR ...
//
// TLA_COMMUNITY names CommunityModules.jar, the community modules (Json
// among them); see classPath for the default.
//
// Exit status: 0 every trace accepted, 1 a trace rejected, 2 an error.

import { existsSync, readFileSync } from 'node:fs';
import { join, dirname, basename, delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrace, traceFiles, traceModule, traceCfg, traceRecord, ikRecords, ikRecord, ikModule, ikCfg, applyEdits }
  from './trace.mjs';
import { listingRecords, listingRecord, listingModule, listingCfg } from './trace-listing.mjs';
import { runTlc, tlcJar } from './tlcrun.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// The class path: tla2tools.jar and CommunityModules.jar. TLA_COMMUNITY
// names the latter; by default it is the one in ../lib beside the folder
// of tla2tools.jar, where the TLA+ tools' build leaves it. Without it
// TLC reads Json from tla2tools.jar, which recent builds ship with it as a
// standard module (a jar stores its file names as they are).
function classPath() {
  const jar = tlcJar();
  if (!existsSync(jar)) {
    console.error(`trace-tlc: TLA2TOOLS names ${jar}, which does not exist`);
    process.exit(2);
  }
  const named = process.env.TLA_COMMUNITY;
  const community = named ?? join(dirname(jar), '..', 'lib', 'CommunityModules.jar');
  if (existsSync(community)) return [jar, community].join(delimiter);
  if (named === undefined && readFileSync(jar).includes('tla2sany/StandardModules/Json.tla')) return jar;
  console.error(`trace-tlc: no CommunityModules.jar (the Json module) at ${community}${named === undefined
    ? `, and ${jar} has no Json module of its own` : ''}.
Set TLA_COMMUNITY to it: the TLA+ tools' build leaves it in lib/ beside dist/,
and https://github.com/tlaplus/CommunityModules/releases publishes it.`);
  process.exit(2);
}

// The module TLC checks: name (the generated module) with Trace read from
// name.ndjson, and the postcondition, which prints how many records the
// deepest state followed.
const jsonModule = (name) => String.raw`---- MODULE ${name}Json ----
EXTENDS ${name}, Json, TLC

JsonTrace == ndJsonDeserialize("${name}.ndjson")

Followed == TLCGet("stats").diameter - 1

TraceAccepted ==
    /\ PrintT(<<"trace-tlc followed", Followed, Len(Trace)>>)
    /\ Followed = Len(Trace)
====
`;

// jsonCfg turns trace.mjs's cfg of an empty trace into TLC's: Trace is the
// file's, and the postcondition replaces the invariant.
function jsonCfg(cfg) {
  const edits = [
    [/^ {4}Trace = <<>>$/m, '    Trace <- JsonTrace'],
    [/^INVARIANT TraceNotConsumed$/m, 'POSTCONDITION TraceAccepted\nCHECK_DEADLOCK FALSE'],
  ];
  return applyEdits(cfg, 'the generated cfg', edits);
}

// tlc checks the records recs (objects) with the generated module of that
// name and its cfg (for an empty trace). Returns { accepted, followed,
// secs }: followed is the number of records the deepest state followed.
function tlc(cp, name, module, cfg, recs) {
  const files = {
    [`${name}.tla`]: module,
    [`${name}.ndjson`]: recs.map((r) => JSON.stringify(r)).join('\n') + '\n',
    [`${name}Json.tla`]: jsonModule(name),
    [`${name}Json.cfg`]: jsonCfg(cfg),
  };
  const r = runTlc(cp, files, `${name}Json.tla`, `${name}Json.cfg`);
  const m = /^<<"trace-tlc followed", (\d+), (\d+)>>$/m.exec(r.out);
  const followed = m ? Number(m[1]) : undefined;
  const sound = m !== null && Number(m[2]) === recs.length;
  if (sound && r.status === 0 && followed === recs.length) return { accepted: true, followed, secs: r.secs };
  if (sound && r.status === 10 && followed < recs.length &&
    /Postcondition \S+ at .* is false\./.test(r.out)) {
    return { accepted: false, followed, secs: r.secs };
  }
  console.log(r.out.split('\n').slice(-20).join('\n'));
  throw new Error(`no verdict from TLC on ${name} (exit status ${r.status})`);
}

const files = traceFiles(process.argv.slice(2));
if (files.length === 0) {
  console.error('trace-tlc: no trace given');
  process.exit(2);
}
const cp = classPath();
const spec = readFileSync(join(here, 'JobTable.tla'), 'utf8');
const keys = readFileSync(join(here, 'IdempotencyKeys.tla'), 'utf8');
const listing = readFileSync(join(here, 'Listing.tla'), 'utf8');
let status = 0;
for (const f of files) {
  try {
    const t = parseTrace(readFileSync(f, 'utf8'));
    const { recs: lrecs, limit } = listingRecords(t); // a malformed page is an error before any verdict
    // Each check: the module, and the event (0-based) of each record.
    const checks = [['JobTable', () => tlc(cp, 'JobTableTrace', traceModule(spec), traceCfg(t, 0),
      t.events.map(traceRecord)), t.events.map((_e, x) => x)]];
    if (t.keyed) {
      const recs = ikRecords(t);
      checks.push(['IdempotencyKeys', () => tlc(cp, 'IdempotencyKeysTrace', ikModule(keys), ikCfg(t, recs, 0),
        recs.map(ikRecord)), recs.map((r) => r.at)]);
    }
    if (limit !== undefined) {
      checks.push(['Listing', () => tlc(cp, 'ListingTrace', listingModule(listing), listingCfg(lrecs, limit, 0),
        lrecs.map(listingRecord)), lrecs.map((r) => r.at)]);
    }
    let secs = 0;
    const done = [];
    let rejected;
    for (const [what, run, at] of checks) {
      const r = run();
      secs += r.secs;
      if (!r.accepted) {
        rejected = { what, at: at[r.followed] + 1, record: r.followed + 1, of: at.length };
        break;
      }
      done.push(`${what}.tla`);
    }
    const took = `${t.events.length} events, ${secs.toFixed(1)}s`;
    if (rejected === undefined) {
      console.log(`accepted ${basename(f)} (${done.join(', ')}): ${took}`);
    } else {
      const rec = rejected.what === 'JobTable' ? '' : `, its record ${rejected.record} of ${rejected.of}`;
      console.log(`REJECTED ${basename(f)} by ${rejected.what}.tla at event ${rejected.at}${rec}: ` +
        `${JSON.stringify(t.events[rejected.at - 1])} (${took})`);
      status = Math.max(status, 1);
    }
  } catch (err) {
    console.log(`ERROR ${basename(f)}: ${err.message}`);
    status = 2;
  }
}
process.exit(status);
