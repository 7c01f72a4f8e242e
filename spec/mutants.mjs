// The spec-mutation gate: every mutation of mutations.json is applied to a
// copy of the specification (in memory for tla-checker, a scratch
// directory for TLC; spec/ is never written) and must be refuted by one of
// the configurations it names, with the violation it names.  A mutation
// whose text no longer matches the specification is an error, never a
// pass; a mutation that survives every configuration it names fails the
// gate.
//
//   node spec/mutants.mjs [NAME ...]             tla-checker mutations (CI)
//   TLA2TOOLS=jar node spec/mutants.mjs --tlc    the TLC-only ones
//   TLA2TOOLS=jar node spec/mutants.mjs --tlc-all  every mutation, with TLC
//   node spec/mutants.mjs --list=FILE         another list (to try one out)
//
// A mutation's refutedBy lists configurations in the order to try them;
// the first refutation ends its run, so name first the configuration that
// refutes it fastest.  Only configurations the manifest expects to pass
// may refute (a must-fail configuration fails with or without the
// mutation).

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { here, loadConfigs, sameOutcome } from './manifest.mjs';

const args = process.argv.slice(2);
const tlcOnly = args.includes('--tlc');
const tlcAll = args.includes('--tlc-all');
const useTlc = tlcOnly || tlcAll;
const only = args.filter((a) => !a.startsWith('--'));
const list = args.find((a) => a.startsWith('--list='))?.slice('--list='.length)
  ?? join(here, 'mutations.json');

const { mutations } = JSON.parse(readFileSync(list, 'utf8'));
const passing = new Map(loadConfigs((c) => c.expect === 'pass').map((c) => [c.cfg, c]));

// A string or a list of lines.
const text = (s) => (Array.isArray(s) ? s.join('\n') : s);

function occurrences(haystack, needle) {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

// The mutated modules of mutation m ({ name: text }), or an error message.
function apply(m, originals) {
  const files = { ...originals };
  for (const e of m.edits) {
    const file = e.file ?? 'JobTable.tla';
    const from = text(e.from);
    const to = text(e.to);
    const want = e.count ?? 1;
    if (!(file in files)) return `edit of unknown file ${file}`;
    if (from === to) return `an edit replaces a text by itself`;
    const got = occurrences(files[file], from);
    if (got !== want) {
      return `${file}: the text to replace occurs ${got} times, the list says ${want}:\n${from}`;
    }
    files[file] = files[file].split(from).join(to);
  }
  return files;
}

// Which mutations this run checks, and with which checker.
const isTlcOnly = (m) => m.checker === 'tlc';
const selected = mutations.filter((m) =>
  (only.length === 0 || only.includes(m.name))
  && (tlcAll || (tlcOnly ? isTlcOnly(m) : !isTlcOnly(m))));
if (only.length > 0 && selected.length !== only.length) {
  console.error(`unknown mutation, or one for the other checker, among: ${only.join(', ')}`);
  process.exit(2);
}

// Every module of spec/: an edit names its file (JobTable.tla unless it
// says otherwise), and a configuration's module is the manifest's.
const originals = {};
for (const f of readdirSync(here).filter((f) => f.endsWith('.tla')).sort()) {
  originals[f] = readFileSync(join(here, f), 'utf8');
}
const cfgText = (cfg) => readFileSync(join(here, cfg), 'utf8');

let run;
if (useTlc) {
  const { runTlc, tlcJar } = await import('./tlcrun.mjs');
  const jar = tlcJar();
  run = (files, spec, cfg) => {
    const r = runTlc(jar, { ...files, [cfg]: cfgText(cfg) }, spec, cfg);
    return { outcome: r.outcome, states: r.distinct, secs: r.secs };
  };
} else {
  const { tlaCheck } = await import('./tlachecker.mjs');
  // tla-checker reads one module: every CI configuration's module is
  // self-contained (JobTable.tla, DurableLedger.tla).
  run = (files, spec, cfg) => tlaCheck(files[spec], cfgText(cfg));
}

const names = new Set();
const failures = [];
let refuted = 0;
const started = Date.now();
for (const m of selected) {
  const fail = (kind, detail) => {
    failures.push(`${kind} ${m.name}: ${detail}\n         (${m.description})`);
    console.log(`${kind.padEnd(8)} ${m.name}: ${detail.split('\n')[0]}`);
  };
  if (names.has(m.name)) { fail('ERROR', 'the name is used twice'); continue; }
  names.add(m.name);
  if (!m.description || !Array.isArray(m.edits) || m.edits.length === 0
      || !Array.isArray(m.refutedBy) || m.refutedBy.length === 0) {
    fail('ERROR', 'needs a description, edits and refutedBy'); continue;
  }
  const bad = m.refutedBy.find((r) => !passing.has(r.cfg) || !(useTlc || passing.get(r.cfg).ci));
  if (bad) { fail('ERROR', `${bad.cfg} is not a passing ${useTlc ? '' : 'CI '}configuration of the manifest`); continue; }
  const files = apply(m, originals);
  if (typeof files === 'string') { fail('ERROR', files); continue; }

  const tried = [];
  let verdict;
  for (const r of m.refutedBy) {
    const spec = passing.get(r.cfg).spec;
    const got = run(files, spec, r.cfg);
    tried.push(`${r.cfg}: ${got.outcome}, ${got.states} states, ${got.secs.toFixed(1)}s`);
    if (got.outcome === 'pass') continue;
    const want = r.violates === 'deadlock' ? 'deadlock' : `violates ${r.violates}`;
    if (got.outcome.startsWith('error')) verdict = ['ERROR', `${r.cfg}: ${got.outcome}`];
    else if (!sameOutcome(got.outcome, want)) verdict = ['FAIL', `${r.cfg}: ${got.outcome}, the list says ${want}`];
    else verdict = ['ok', `${r.cfg}: ${got.outcome}, ${got.states} states (${got.secs.toFixed(1)}s)`];
    break;
  }
  if (!verdict) {
    fail('SURVIVED', `no configuration refutes it: ${tried.join('; ')}`);
  } else if (verdict[0] === 'ok') {
    refuted++;
    const passedFirst = tried.length > 1 ? `; first passed: ${tried.slice(0, -1).join('; ')}` : '';
    console.log(`ok       ${m.name.padEnd(34)} ${verdict[1]}${passedFirst}`);
  } else {
    fail(verdict[0], verdict[1]);
  }
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
const checker = useTlc ? 'TLC' : 'tla-checker';
if (failures.length > 0) {
  console.log(`\n${failures.length} of ${selected.length} mutations not refuted as listed:`);
  for (const f of failures) console.log(`  ${f}`);
}
console.log(`spec-mutants (${checker}): ${refuted} refuted, ${selected.length - refuted} not, ${secs}s`);
process.exit(failures.length === 0 ? 0 : 1);
