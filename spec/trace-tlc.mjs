// Trace validation with TLC, for maintainers: the same check as trace.mjs,
// with TLC in place of tla-checker. TLC reads the trace from a generated
// definition (the jar has no Json module), TraceDef, which the cfg
// substitutes for the constant Trace; deadlock is not checked, and a
// trace is accepted when TLC reports TraceNotConsumed violated, that is
// when it followed the whole trace; "No error has been found" is a
// rejection; anything else is an error. A keyed run is followed by
// IdempotencyKeys.tla too, and a run that lists by Listing.tla. TLC is not a dependency of the build or of CI.
//
//   TLA2TOOLS=/path/to/tla2tools.jar node spec/trace-tlc.mjs FILE|DIR ...
//
// Exit status: 0 every trace accepted, 1 a trace rejected, 2 an error.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrace, traceModule, traceCfg, ikRecords, ikModule, ikCfg } from './trace.mjs';
import { listingRecords, listingModule, listingCfg } from './trace-listing.mjs';
import { runTlc, tlcJar } from './tlcrun.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const jar = tlcJar();

// withDef moves the constant Trace of cfg into the module as TraceDef.
function withDef(module, cfg) {
  const m = /^ {4}Trace = (<<[\s\S]*?>>)\nINIT/m.exec(cfg);
  if (!m) throw new Error('no Trace in the cfg');
  const mod = module.replace(/\n=+\s*$/, `\nTraceDef == ${m[1]}\n${'='.repeat(77)}\n`);
  const c = cfg.replace(m[0], '    Trace <- TraceDef\nINIT') + 'CHECK_DEADLOCK FALSE\n';
  return [mod, c];
}

function tlc(name, module, cfg) {
  const [mod, c] = withDef(module, cfg);
  const r = runTlc(jar, { [`${name}.tla`]: mod, [`${name}.cfg`]: c }, `${name}.tla`, `${name}.cfg`);
  if (r.outcome === 'violates TraceNotConsumed') return { accepted: true, secs: r.secs };
  if (r.outcome === 'pass') return { accepted: false, secs: r.secs };
  console.log(r.out.split('\n').slice(-20).join('\n'));
  throw new Error(`no verdict from TLC: ${r.outcome}`);
}

const files = [];
for (const a of process.argv.slice(2)) {
  if (statSync(a).isDirectory()) {
    for (const f of readdirSync(a).sort()) if (f.endsWith('.ndjson')) files.push(join(a, f));
  } else files.push(a);
}
if (files.length === 0) {
  console.error('trace-tlc: no trace given');
  process.exit(2);
}
const spec = readFileSync(join(here, 'JobTable.tla'), 'utf8');
const keys = readFileSync(join(here, 'IdempotencyKeys.tla'), 'utf8');
const listing = readFileSync(join(here, 'Listing.tla'), 'utf8');
let status = 0;
for (const f of files) {
  try {
    const t = parseTrace(readFileSync(f, 'utf8'));
    let r = tlc('JobTableTrace', traceModule(spec), traceCfg(t));
    let what = 'JobTable.tla';
    if (r.accepted && t.keyed) {
      const recs = ikRecords(t);
      const k = tlc('IdempotencyKeysTrace', ikModule(keys), ikCfg(t, recs));
      r = { accepted: k.accepted, secs: r.secs + k.secs };
      what += ' and IdempotencyKeys.tla';
    }
    const { recs, limit } = listingRecords(t);
    if (r.accepted && limit !== undefined) {
      const l = tlc('ListingTrace', listingModule(listing), listingCfg(recs, limit));
      r = { accepted: l.accepted, secs: r.secs + l.secs };
      what += ' and Listing.tla';
    }
    console.log(`${r.accepted ? 'accepted' : 'REJECTED'} ${basename(f)} (${what}): ${t.events.length} events, ` +
      `${r.secs.toFixed(1)}s`);
    if (!r.accepted) status = Math.max(status, 1);
  } catch (err) {
    console.log(`ERROR ${basename(f)}: ${err.message}`);
    status = 2;
  }
}
process.exit(status);
