// Checks every configuration marked "ci" in manifest.json with the pinned
// tla-checker and compares the outcome and the distinct-state count with
// the manifest.  One line per configuration, then a summary; exits non-zero
// on any mismatch.
//
//   node spec/check.mjs [--trace] [CONFIG.cfg ...]
//
// --trace prints the counterexample of every configuration that violates
// an invariant.  Names of configurations restrict the run to those.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tally, here, loadConfigs } from './manifest.mjs';
import { tlaCheck } from './tlachecker.mjs';

const args = process.argv.slice(2);
const showTrace = args.includes('--trace');
const only = args.filter((a) => !a.startsWith('--'));

const configs = loadConfigs((c) => c.ci && (only.length === 0 || only.includes(c.cfg)));
if (only.length > 0 && configs.length !== only.length) {
  console.error(`unknown or non-ci configuration among: ${only.join(', ')}`);
  process.exit(2);
}

const tally = new Tally();
const started = Date.now();
for (const c of configs) {
  const spec = readFileSync(join(here, c.spec), 'utf8');
  const cfg = readFileSync(join(here, c.cfg), 'utf8');
  const r = tlaCheck(spec, cfg);
  tally.record(c, r.outcome, r.states, c.tlaChecker.distinct, r.secs.toFixed(1));
  if (showTrace && r.trace) console.log(r.trace.join('\n'));
}
console.log(`tla-checker: ${((Date.now() - started) / 1000).toFixed(1)}s in all`);
tally.finish('spec');
